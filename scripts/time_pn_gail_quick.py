"""Wall and CPU time of ``iclr25 pn-gail compare --quick``, before and after a change.

    nice -n 5 python scripts/time_pn_gail_quick.py --before a1aca20 [--after HEAD] [--rounds 2]

Issue 23 asks for ``compare --quick`` (fixed point + GAIL vs PN-GAIL, one seed, 100k
steps) to take ≤ 60 s on the 2-core machine. Each round runs the console command

    iclr25 pn-gail compare --quick --json --no-cache --quiet --seed 0 --workers N

for every variant, in an order rotated every round (so no variant always runs first or
last on a machine whose load drifts): the code of commit ``--before`` and of ``--after``
(each extracted with ``git archive`` into a temporary folder put first on ``PYTHONPATH``;
without ``--after``, this checkout as it is), each with ``--workers 1`` (in-process) and
``--workers 2`` (GAIL and PN-GAIL in two processes), and the after code without
``--workers`` (its default: chosen by the load). This process is made a child
subreaper, so the CPU time counted (user + sys) includes the fork server and pool workers
a run leaves behind. The machine is shared: the 1-minute load average before each run is
recorded; wall times move with it, CPU times much less.

Writes ``experiments/results/pn-gail-quick-timing.json``: provenance, per-run wall and
CPU seconds, medians per variant, and each run's results fingerprint (GAIL's and
PN-GAIL's normalised return, the classifier's MAE, the fixed point's error) so that it
shows which figures a change kept bit for bit and which it moved.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "experiments" / "results" / "pn-gail-quick-timing.json"
COMMAND = ("pn-gail", "compare", "--quick", "--json", "--no-cache", "--quiet", "--seed", "0")
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Orphaned descendants (a pool's fork server) are re-parented here, so their CPU
    time reaches this process's RUSAGE_CHILDREN once they are reaped (Linux only)."""
    try:
        return ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def reap_orphans() -> None:
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def extract(commit: str, folder: Path) -> Path:
    """The tree of ``commit`` in ``folder`` (``git archive``: tracked files only)."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def short_commit(name: str) -> str:
    out = subprocess.run(["git", "rev-parse", "--short", name], cwd=ROOT, capture_output=True)
    return out.stdout.decode().strip() or name


def fingerprint(doc: dict) -> dict:
    res = doc["results"]
    methods = res["settings"]["dominated"]["methods"]
    return {
        "gail": methods["gail"]["normalized_return"]["mean"],
        "pn-gail": methods["pn-gail"]["normalized_return"]["mean"],
        "confidence_mae": res["settings"]["dominated"]["confidence_mae_unlabeled"][0],
        "fixed_point_error": res["fixed_point"]["max_abs_error"],
        "backend": doc["environment"]["execution"]["backend"],
    }


def run_once(code_dir: Path, workers: int | None) -> dict:
    """One timed run of the command with ``code_dir`` first on the import path (``workers``
    None: no ``--workers``, the command's own default)."""
    env = {**os.environ, "PYTHONPATH": str(code_dir), "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-m", "iclr25", *COMMAND]
    argv += [] if workers is None else ["--workers", str(workers)]
    load = os.getloadavg()[0]
    cpu0, t0 = children_cpu_s(), time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=code_dir)
    wall = time.perf_counter() - t0
    reap_orphans()
    cpu = children_cpu_s() - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"Error: {' '.join(argv)} exited {proc.returncode}: {proc.stderr[-500:]}")
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "load_before": load,
        "results": fingerprint(json.loads(proc.stdout)),
    }


def summarize(runs: dict) -> dict:
    out = {}
    for name, rows in runs.items():
        out[name] = {
            "wall_median_s": statistics.median(r["wall_s"] for r in rows),
            "cpu_median_s": statistics.median(r["cpu_s"] for r in rows),
            "wall_s": [r["wall_s"] for r in rows],
            "cpu_s": [r["cpu_s"] for r in rows],
            "load_before": [r["load_before"] for r in rows],
            "same_results_every_run": all(r["results"] == rows[0]["results"] for r in rows),
            "results": rows[0]["results"],
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="commit of the code before the change")
    parser.add_argument("--after", default=None, help="commit after it (default: this checkout)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    from iclr25 import atomic
    from iclr25.provenance import provenance

    counted = become_subreaper()
    with tempfile.TemporaryDirectory(prefix="pn-gail-timing-") as tmp:
        trees = {"before": extract(args.before, Path(tmp) / "before"), "after": ROOT}
        if args.after is not None:
            trees["after"] = extract(args.after, Path(tmp) / "after")
        variants = [(f"{side}_workers{w}", trees[side], w) for side in trees for w in (1, 2)]
        variants.append(("after_default", trees["after"], None))  # what a user types
        runs: dict = {name: [] for name, _, _ in variants}
        for r in range(args.rounds):
            shift = r % len(variants)
            for name, tree, workers in variants[shift:] + variants[:shift]:
                row = run_once(tree, workers)
                runs[name].append(row)
                print(
                    f"round {r} {name}: wall {row['wall_s']:.1f} s, CPU {row['cpu_s']:.1f} s, "
                    f"load {row['load_before']:.1f}",
                    file=sys.stderr,
                    flush=True,
                )
    doc = {
        "name": "pn-gail-quick-timing",
        "about": "wall and CPU seconds of `iclr25 pn-gail compare --quick --no-cache` before "
        f"(commit {args.before}) and after issue 23's speed pass, in-process and with two "
        "worker processes, interleaved on the shared machine",
        "provenance": provenance(seeds=[0]),
        "command": ["iclr25", *COMMAND, "--workers", "N"],
        "before_commit": short_commit(args.before),
        "after_commit": short_commit(args.after) if args.after else "this checkout",
        "rounds": args.rounds,
        "cpu_includes_workers": counted,
        "variants": summarize(runs),
        "cpus": os.cpu_count(),
    }
    atomic.write_json(args.out, doc)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
