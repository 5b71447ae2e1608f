"""Studies of `iclr25 mim-refine` whose documents docs/mim-refine.md quotes.

``mim-refine-profile``: the per-block probe of the bundled MAE on the built-in textures
(3000 train, 1000 test; k-NN and logistic probe per block). ``mim-refine-experiment-quick``:
the headline experiment's ``--quick`` smoke run (2 seeds, 40 steps per arm), never
evidence and not quoted by the docs. ``mim-refine-experiment`` is the headline run at the
issue's size (3 seeds, 100 + 900 steps per arm at batch 64 on 5000 images: 12.8 epochs,
two workers; ≈ 45 CPU-minutes): not run yet. The headline figures the docs quote come
from ``scripts/mim_refine_experiment.py`` (the same command at a smaller training set,
10 epochs per arm) → ``benchmarks/results/mim-refine.json``.
"""

from __future__ import annotations

from experiments import Study

STUDIES = {
    "mim-refine-profile": Study(
        args=("mim-refine", "profile", "--probe", "--n-train", "3000", "--n-test", "1000"),
        about="k-NN (k 10, τ 0.07) and logistic probe of every block's CLS token of the "
        "bundled MAE, built-in textures 3000/1000; peak picked on a validation split",
    ),
    "mim-refine-experiment-quick": Study(
        args=("mim-refine", "experiment", "--quick"),
        about="smoke run of the headline experiment: mim / nna_multi / nna_last / "
        "mae_continued, 2 seeds, 10 + 30 steps, 1000 training images",
    ),
    "mim-refine-experiment": Study(
        args=("mim-refine", "experiment", "--seeds", "3", "--workers", "2"),
        about="headline: nna_multi vs mim (best block), mae_continued and nna_last, 3 seeds, "
        "1000 steps per arm at batch 64, 5000 train / 1000 test textures",
    ),
}
