"""Studies of `iclr25 exicl` whose documents docs/exicl.md quotes."""

from __future__ import annotations

from experiments import Study

STUDIES = {
    "exicl-experiment": Study(
        args=("exicl", "experiment", "--workers", "2"),
        about="the headline at the issue's budget: 5 seeds, K = 5, 20 rounds × 32 guided "
        "samples per constraint (max-entropy ICL with 400 likelihood steps per fit); about "
        "23 CPU-minutes on an idle machine",
    ),
    "exicl-experiment-quick": Study(
        args=("exicl", "experiment", "--quick", "--workers", "2"),
        about="the headline at the quick size (2 seeds, K = 3, 6 rounds × 16 guided samples "
        "per constraint; max-entropy ICL baseline with 120 likelihood steps per fit), "
        "reduced to finish on a shared 2-core machine",
    ),
    "exicl-experiment-5seeds": Study(
        args=(
            "exicl",
            "experiment",
            "--seeds",
            "5",
            "--k",
            "5",
            "--rounds",
            "6",
            "--samples",
            "16",
            "--workers",
            "2",
        ),  # fmt: skip
        about="the headline with the issue's 5 seeds and K = 5, at the quick per-constraint "
        "budget (6 rounds × 16 guided samples; max-entropy ICL with 120 likelihood steps per "
        "fit); the issue's 20 × 32 does not fit the 40 CPU-minute budget of a shared 2-core "
        "machine",
    ),
    "exicl-calibrate-2000": Study(
        args=("exicl", "calibrate", "--candidates", "2000"),
        about="GDV against exact verdicts on the issue's 2,000 masks of the wall layout "
        "(seed 0): half the hidden wall with cells flipped, half random",
    ),
}
