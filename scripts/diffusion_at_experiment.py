"""The "what to reproduce" experiment of diffusion-at: every measured table of the docs.

    nice -n 10 .venv/bin/python scripts/diffusion_at_experiment.py OUT_DIR [GROUP ...]

Runs `iclr25 diffusion-at compare` once per setting into OUT_DIR/<setting>/ (a setting
whose result.json exists is not rerun, so an interrupted experiment resumes) and prints
the markdown tables of docs/diffusion-at.md, "Measured", from the result files. GROUPs
(all by default, in this order): sweep, points, digits, cm. The sweep chooses the default
radius α that the other groups use; each group's settings are listed below.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

POINTS = ("8gaussians", "checkerboard")
NFE_SWEEP = (2, 3, 5, 10, 20, 50)  # compare's default
NFE_POINTS = "1,2,3,5,10,20,50"  # NFE 1 and 2: the budget of one- and two-step CM sampling
SWEEP_ALPHAS = {"free": (0.02, 0.05, 0.1, 0.2), "fgsm": (0.02, 0.05, 0.1)}
FINE_TUNE = ["--at-start", "2000"]  # of the default 3000 steps: AT for the last third
ARMS = {  # points: the arms of the main table (columns), each a `compare --at ...`
    "free": ["--at", "free"],
    "replay": ["--at", "replay"],
    "fgsm": ["--at", "fgsm"],
    "free-finetune": ["--at", "free", *FINE_TUNE],
    "replay-finetune": ["--at", "replay", *FINE_TUNE],
}
ARM_TITLES = {
    "free": "free",
    "replay": "replay",
    "fgsm": "FGSM",
    "free-finetune": "free, fine-tune",
    "replay-finetune": "replay, fine-tune",
}
DIGITS = ["--steps", "2000", "--n", "1000", "--nfe", "2,3,5,10,20"]
CM = {  # consistency models: objective, AT arm, target-network μ
    "ct-free": ["--objective", "ct", "--at", "free"],
    "ct-fgsm": ["--objective", "ct", "--at", "fgsm"],
    "cd-free": ["--objective", "cd", "--at", "free"],
    "ct-free-mu0": ["--objective", "ct", "--at", "free", "--cm-target-ema", "0"],
}


def settings() -> dict[str, dict[str, list[str]]]:
    """{group: {setting name: compare arguments}}."""
    three = ["--seeds", "3", "--mismatch-nfe", "5"]
    nfe = ["--nfe", NFE_POINTS]
    sweep = {
        f"sweep-{data}-{method}-{alpha}": [
            *("--data", data, "--at", method, "--alpha", str(alpha)),
            *("--seeds", "2", "--mismatch-nfe", "0"),
        ]
        for data in POINTS
        for method, alphas in SWEEP_ALPHAS.items()
        for alpha in alphas
    }
    for data in POINTS:  # the other regression target at the default radius
        sweep[f"sweep-{data}-free-0.05-eps"] = [
            *sweep[f"sweep-{data}-free-0.05"],
            *("--at-target", "eps"),
        ]
    points = {
        f"{data}-{arm}": ["--data", data, *args, *nfe, *three]
        for data in POINTS
        for arm, args in ARMS.items()
    }
    digits = {"digits-free": ["--data", "digits", *DIGITS, *three]}
    cm = {
        f"8gaussians-{name}": ["--data", "8gaussians", *args, "--seeds", "3"]
        for name, args in CM.items()
    }
    cm.update({"checkerboard-ct-free": ["--data", "checkerboard", *CM["ct-free"], "--seeds", "3"]})
    return {"sweep": sweep, "points": points, "digits": digits, "cm": cm}


def run_setting(out: Path, name: str, args: list[str]) -> dict:
    folder = out / name
    if not (folder / "result.json").exists():
        iclr25 = str(Path(sys.executable).parent / "iclr25")
        cmd = [iclr25, "diffusion-at", "compare", *args, "--out", str(folder), "--quiet", "--json"]
        env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise SystemExit(f"{name} failed: {proc.stderr.strip()}")
    return json.loads((folder / "result.json").read_text())["results"]


def cell(stats: dict, digits: int = 3) -> str:
    return f"{stats['mean']:.{digits}f} ± {stats['sd']:.{digits}f}"


def sweep_table(res: dict[str, dict]) -> str:
    lines = [
        "| data | arm | " + " | ".join(f"NFE {k}" for k in NFE_SWEEP) + " |",
        "|---|---|" + "---|" * len(NFE_SWEEP),
    ]
    for data in POINTS:
        first = res[f"sweep-{data}-free-{SWEEP_ALPHAS['free'][0]}"]
        rows = [("baseline", first, "baseline")]
        rows += [
            (f"{'FGSM' if m == 'fgsm' else m} α={a}", res[f"sweep-{data}-{m}-{a}"], "at")
            for m, alphas in SWEEP_ALPHAS.items()
            for a in alphas
        ]
        rows.append(("free α=0.05, target ε", res[f"sweep-{data}-free-0.05-eps"], "at"))
        for title, r, arm in rows:
            values = " | ".join(f"{row[arm]['sw']['mean']:.3f}" for row in r["per_nfe"])
            lines.append(f"| {data} | {title} | {values} |")
    return "\n".join(lines)


def arms_table(res: dict[str, dict], data: str) -> str:
    runs = {arm: res[f"{data}-{arm}"] for arm in ARMS}
    first = next(iter(runs.values()))
    n_seeds = len(first["seeds"])
    lines = [
        "| NFE | baseline | " + " | ".join(ARM_TITLES[a] for a in ARMS) + " |",
        "|---|---|" + "---|" * len(ARMS),
    ]
    for i, row in enumerate(first["per_nfe"]):
        cells = [
            f"{cell(r['per_nfe'][i]['at']['sw'])} ({r['per_nfe'][i]['at_better_seeds']}/{n_seeds})"
            for r in runs.values()
        ]
        lines.append(
            f"| {row['nfe']} | {cell(row['baseline']['sw'])} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def mismatch_table(res: dict[str, dict]) -> str:
    lines = [
        "| data | t | baseline | " + " | ".join(ARM_TITLES[a] for a in ARMS) + " |",
        "|---|---|---|" + "---|" * len(ARMS),
    ]
    for data in POINTS:
        runs = [res[f"{data}-{arm}"]["mismatch"]["curve"] for arm in ARMS]
        for j, point in enumerate(runs[0]):
            t = "x̂₀" if point["t"] < 0 else str(point["t"])
            base = f"{point['baseline']['mmd']['mean']:.4f}"
            arms = " | ".join(f"{curve[j]['at']['mmd']['mean']:.4f}" for curve in runs)
            lines.append(f"| {data} | {t} | {base} | {arms} |")
    return "\n".join(lines)


def digits_table(r: dict) -> str:
    lines = [
        "| NFE | baseline FD | AT FD | AT − baseline | AT better | precision base / AT "
        "| recall base / AT |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in r["per_nfe"]:
        b, a = row["baseline"], row["at"]
        lines.append(
            f"| {row['nfe']} | {cell(b['fd'], 1)} | {cell(a['fd'], 1)} | "
            f"{row['difference']['mean']:+.1f} ± {row['difference']['sd']:.1f} | "
            f"{row['at_better_seeds']}/{len(r['seeds'])} | {b['precision']['mean']:.2f} / "
            f"{a['precision']['mean']:.2f} | {b['recall']['mean']:.2f} / "
            f"{a['recall']['mean']:.2f} |"
        )
    last = r["mismatch"]["curve"][-1]
    lines.append("")
    lines.append(
        f"Mismatch at NFE {r['mismatch']['nfe']} (output, pixels, MMD²): baseline "
        f"{cell(last['baseline']['mmd'])}, AT {cell(last['at']['mmd'])}."
    )
    return "\n".join(lines)


def cm_table(res: dict[str, dict]) -> str:
    lines = [
        "| data | objective, θ⁻ μ | AT | steps | baseline | AT | AT better |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in res.items():
        data, kind = name.split("-", 1)
        mu = "0" if kind.endswith("mu0") else "0.95"
        arm = "FGSM" if "fgsm" in kind else "free"
        for row in r["per_nfe"]:
            lines.append(
                f"| {data} | {r['objective']}, μ = {mu} | {arm} | {row['nfe']} | "
                f"{cell(row['baseline']['sw'])} | {cell(row['at']['sw'])} | "
                f"{row['at_better_seeds']}/{len(r['seeds'])} |"
            )
    return "\n".join(lines)


def report(group: str, res: dict[str, dict]) -> str:
    if group == "sweep":
        return "Default radius α (sliced W₂, mean of 2 seeds):\n\n" + sweep_table(res)
    if group == "points":
        parts = [f"**{data}**\n\n{arms_table(res, data)}" for data in POINTS]
        return "\n\n".join([*parts, "Mismatch at NFE 5 (MMD², mean):\n\n" + mismatch_table(res)])
    if group == "digits":
        return digits_table(res["digits-free"])
    return "Consistency models (sliced W₂; steps = sampling steps):\n\n" + cm_table(res)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    out, groups = Path(argv[0]), argv[1:] or list(settings())
    table = settings()
    unknown = [g for g in groups if g not in table]
    if unknown:
        print(f"unknown group(s) {unknown}; use {list(table)}", file=sys.stderr)
        return 2
    for group in groups:
        res = {name: run_setting(out, name, args) for name, args in table[group].items()}
        print(report(group, res), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
