"""Studies of `iclr25 exicl` whose documents docs/exicl.md quotes."""

from __future__ import annotations

from experiments import Study

STUDIES = {
    "exicl-experiment-quick": Study(
        args=("exicl", "experiment", "--quick", "--workers", "2"),
        about="the headline at the quick size (2 seeds, K = 3, 6 rounds × 16 guided samples "
        "per constraint; max-entropy ICL baseline with 120 likelihood steps per fit), "
        "reduced to finish on a shared 2-core machine",
    ),
    "exicl-calibrate": Study(
        args=("exicl", "calibrate", "--candidates", "16"),
        about="GDV against exact verdicts on 16 masks of the wall layout (seed 0): half the "
        "hidden wall with cells flipped, half random; sized for a shared 2-core machine",
    ),
}
