"""The "what to reproduce" experiment of diffusion-at: baseline vs AT over seeds.

    nice -n 10 .venv/bin/python scripts/diffusion_at_experiment.py OUT_DIR [NAME ...]

Runs `iclr25 diffusion-at compare` for each named setting (all by default) into
OUT_DIR/<name>/ (skipping settings whose result.json already exists, so an interrupted
experiment resumes) and prints one markdown table per setting: the primary metric per
NFE, mean ± sd over seeds, the paired difference and the number of seeds AT won.
docs/diffusion-at.md reports its output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SEEDS = ["--seeds", "3", "--mismatch-nfe", "5"]
SETTINGS = {
    # the paper's AT (free, ℓ2, x0 target, 3 replays) from scratch, default α
    "checkerboard-free": ["--data", "checkerboard", *SEEDS],
    "8gaussians-free": ["--data", "8gaussians", *SEEDS],
    # control: free's minibatch replays without δ (separates AT from replaying)
    "checkerboard-replay": ["--data", "checkerboard", "--at", "replay", *SEEDS],
    "8gaussians-replay": ["--data", "8gaussians", "--at", "replay", *SEEDS],
    # FGSM: a fresh minibatch every step, so no replay confound
    "checkerboard-fgsm": ["--data", "checkerboard", "--at", "fgsm", *SEEDS],
    "8gaussians-fgsm": ["--data", "8gaussians", "--at", "fgsm", *SEEDS],
    # images: 8×8 digits, U-Net, Fréchet distance in the digit classifier's features
    "digits-free": [
        "--data",
        "digits",
        "--steps",
        "2000",
        "--n",
        "1000",
        "--nfe",
        "2,3,5,10,20",
        *SEEDS,
    ],
    # consistency training with and without AT (one- and two-step sampling)
    "8gaussians-ct-free": ["--data", "8gaussians", "--objective", "ct", *SEEDS],
    # the paper's protocol: AT fine-tunes a plainly trained model (last third of the steps)
    "checkerboard-free-finetune": ["--data", "checkerboard", "--at-start", "2000", *SEEDS],
    "8gaussians-free-finetune": ["--data", "8gaussians", "--at-start", "2000", *SEEDS],
    # ... and its replay control
    "checkerboard-replay-finetune": [
        "--data",
        "checkerboard",
        "--at",
        "replay",
        "--at-start",
        "2000",
        *SEEDS,
    ],
    "8gaussians-replay-finetune": [
        "--data",
        "8gaussians",
        "--at",
        "replay",
        "--at-start",
        "2000",
        *SEEDS,
    ],
}


def run_setting(out: Path, name: str) -> dict:
    folder = out / name
    if not (folder / "result.json").exists():
        cmd = [
            str(Path(sys.executable).parent / "iclr25"),
            "diffusion-at",
            "compare",
            *SETTINGS[name],
            "--out",
            str(folder),
            "--quiet",
            "--json",
        ]
        env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise SystemExit(f"{name} failed: {proc.stderr.strip()}")
    return json.loads((folder / "result.json").read_text())


def table(name: str, doc: dict) -> str:
    res = doc["results"]
    metric = res["primary_metric"]
    at, start = doc["config"]["at"], doc["config"]["base"]["at_start"]
    lines = [
        f"**{name}** — {res['data']}, {res['objective']}, {res['steps']} steps, "
        f"seeds {res['seeds']}, AT {at['method']} α={at['alpha']} target {at['target']}"
        + (f", AT from step {start}" if start else ""),
        "",
        f"| NFE | baseline {metric} | AT {metric} | AT − baseline | AT better |",
        "|---|---|---|---|---|",
    ]
    for row in res["per_nfe"]:
        b, a, d = row["baseline"][metric], row["at"][metric], row["difference"]
        lines.append(
            f"| {row['nfe']} | {b['mean']:.4f} ± {b['sd']:.4f} | {a['mean']:.4f} ± "
            f"{a['sd']:.4f} | {d['mean']:+.4f} ± {d['sd']:.4f} | "
            f"{row['at_better_seeds']}/{len(res['seeds'])} |"
        )
    curve = res["mismatch"]["curve"]
    if curve:
        last = curve[-1]
        lines.append("")
        lines.append(
            f"Mismatch at NFE {res['mismatch']['nfe']}, final step (MMD²): baseline "
            f"{last['baseline']['mmd']['mean']:.4f} ± {last['baseline']['mmd']['sd']:.4f}, "
            f"AT {last['at']['mmd']['mean']:.4f} ± {last['at']['mmd']['sd']:.4f}"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    out = Path(argv[0])
    names = argv[1:] or list(SETTINGS)
    for name in names:
        print(table(name, run_setting(out, name)), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
