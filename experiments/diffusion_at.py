"""Studies of `iclr25 diffusion-at compare`: AT against the baseline, replay-only and noise.

Each is one `compare` run; the command itself states the hypothesis, the controls and the
pass conditions (``iclr25/core/diffusion_at/verdict.py``) and records the verdict. Sizes,
with the wall time measured on the development machine (2 cores shared with other jobs,
one torch thread, ``--workers 1``) in each result file's ``seconds``:

- ``diffusion-at-8gaussians``: the default protocol (free AT from step 0, α = 0.05), 3000
  optimiser steps, 5 seeds, NFE 2–50;
- ``diffusion-at-8gaussians-paper``: ``--preset paper`` (the official code's step, radius,
  cosine schedule; AT fine-tunes the last quarter of a plainly trained model), at the
  demo's budget (800 steps, 800 samples) with 5 seeds — 3000 steps did not fit in the time
  the shared machine left;
- ``diffusion-at-digits``: the larger scale — the U-Net on 8×8 digits, ``--preset paper``,
  2000 steps, 5 seeds: ≈ 9 000 U-Net steps in all (the plain prefix is shared by the
  variants of a seed), ≈ 28 CPU minutes at the benchmark's ~5 steps per CPU second, plus
  sampling — an estimate for ≤ 30 min with ``--workers 2`` on a quiet 2-core machine, not
  run here. ``diffusion-at-digits-reduced`` is the same comparison with 3 seeds, 300 steps
  of batch 64, 300 samples and NFE 2–10: what fit in the time left on a machine shared by eight
  jobs (load ≈ 20 on 2 cores); an under-trained U-Net;
- ``diffusion-at-quick``: the demo (`compare --quick`), whose headline the docs quote.
"""

from experiments import Study

PAPER_8G = ("diffusion-at", "compare", "--data", "8gaussians", "--preset", "paper")
DIGITS = ("diffusion-at", "compare", "--data", "digits", "--preset", "paper")

STUDIES = {
    "diffusion-at-8gaussians": Study(
        args=("diffusion-at", "compare", "--data", "8gaussians", "--seeds", "5"),
        about="free AT vs baseline, replay-only and noise controls; 8gaussians, 3000 steps, "
        "5 seeds, NFE 2-50",
    ),
    "diffusion-at-8gaussians-paper": Study(
        args=(
            *PAPER_8G,
            *("--seeds", "5", "--steps", "800", "--nfe", "2,3,5,10,20", "--n", "800"),
        ),
        about="the paper's settings (--preset paper: AT fine-tunes the last quarter); "
        "8gaussians, 800 steps (the demo's budget; 3000 did not fit the shared machine), "
        "800 samples, 5 seeds, NFE 2-20",
    ),
    "diffusion-at-digits": Study(
        args=(*DIGITS, "--seeds", "5", "--steps", "2000", "--nfe", "2,3,5,10,20", "--n", "1000"),
        about="the larger scale: U-Net on 8x8 digits, --preset paper, 2000 steps, 5 seeds "
        "(estimated <= 30 min with --workers 2 on a quiet 2-core machine; not run here)",
    ),
    "diffusion-at-digits-reduced": Study(
        args=(
            *(*DIGITS, "--seeds", "3", "--steps", "300", "--batch-size", "64"),
            *("--nfe", "2,3,5,10", "--n", "300"),
        ),
        about="the digits study at 3 seeds, 300 steps of batch 64, 300 samples, NFE 2-10 "
        "(what fit in the time left on the shared machine: an under-trained U-Net, and too "
        "few seeds for a Holm-adjusted test to pass unless the effect is very large)",
    ),
    "diffusion-at-quick": Study(
        args=("diffusion-at", "compare", "--quick"),
        about="the demo: 8gaussians, 800 steps, 3 seeds, NFE 3-20",
    ),
}
