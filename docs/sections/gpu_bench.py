"""Measured sections of docs/gpu-bench.md, rendered from benchmarks/results/gpu-bench.json.

- ``goals``: every goal of :mod:`iclr25.core.gpu_bench.goals` with its measured ratio and
  verdict (the same judgement as the GPU check's summary lines);
- ``rows``: the GPU rows (ours, the reference, the ratio, the kernel that ran, the worst
  error / bound), or a sentence saying the last run had no GPU;
- ``cpu``: the CPU reference comparisons of a run without a GPU;
- ``registers``: the nvcc compile check (registers and spills per kernel and arch).
"""

from __future__ import annotations

from docs.sections import md_table, num

RESULT = "benchmarks/results/gpu-bench.json"


def _rows(doc: dict) -> list[dict]:
    return (doc.get("figures") or {}).get("rows") or []


def render_goals(sources) -> str:
    from iclr25.core.gpu_bench.goals import judge_all

    doc = sources.load(RESULT)
    notes = {t["name"]: t["note"] for t in doc["targets"]}
    table = []
    for o in judge_all(_rows(doc)):
        note = o.note if o.ratio is not None else notes.get(o.goal.name) or o.note
        verdict = o.verdict if o.verdict == "met" else f"**{o.verdict}**"
        table.append(
            [f"{o.goal.op} {o.goal.shape}", o.goal.reference, num(o.ratio), f">= {o.goal.target:g}",
             verdict, note]
        )  # fmt: skip
    return md_table(table, ["case", "against", "ours / reference", "goal", "verdict", "note"])


def render_rows(sources) -> str:
    doc = sources.load(RESULT)
    rows = _rows(doc)
    if not rows:
        machine = (doc.get("provenance") or {}).get("machine") or {}
        where = machine.get("gpu") or machine.get("platform") or "this machine"
        return (
            f"No GPU rows: the recorded run had no CUDA device ({where}). "
            "`scripts/gpu-check.sh` on an H100/H200 writes them."
        )
    table = [
        [f"{r['op']} {r['shape']}", r.get("kernel") or "—", r["reference"] or "—",
         num(r["ours_tflops"]), num(r["reference_tflops"]), num(r["ratio"]),
         num(r.get("error_ratio"), 2), r["note"] or ""]
        for r in rows
    ]  # fmt: skip
    headers = ["case", "kernel that ran", "reference", "ours TFLOP/s", "ref TFLOP/s", "ratio"]
    return md_table(table, headers + ["error / bound", "note"])


def render_cpu(sources) -> str:
    doc = sources.load(RESULT)
    figures = doc.get("figures") or {}
    pairs = [
        ("torch SDPA vs the naive softmax(QK^T)V (fp32, B=1, H=4, D=64)",
         figures.get("cpu_sdpa_speedup_over_naive_attention")),
        ("PyTorch chunked vs the quadratic linear attention (fp32, same shape)",
         figures.get("cpu_chunked_speedup_over_quadratic_linear_attention")),
    ]  # fmt: skip
    measured = [[what, f"{num(value)}x"] for what, value in pairs if value is not None]
    if not measured:
        return "The recorded run was on a GPU: no CPU comparison."
    return md_table(measured, ["CPU comparison (same run, interleaved)", "speed-up"])


def render_registers(sources) -> str:
    doc = sources.load(RESULT)
    kernels = (doc.get("figures") or {}).get("kernels") or []
    table = []
    for k in kernels:
        if k.get("skipped"):
            state = f"skipped: {k.get('reason', '')}"
        elif k.get("ok"):
            state = "ok"
        else:
            state = f"**failed**: {k.get('reason', '')}"
        table.append([k["name"], k["arch"], state, num(k.get("registers")), num(k.get("spills"))])
    return md_table(table, ["kernel", "arch", "nvcc", "registers (max)", "spill bytes"])


SECTIONS = {
    "goals": render_goals,
    "rows": render_rows,
    "cpu": render_cpu,
    "registers": render_registers,
}
