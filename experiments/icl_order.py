"""Studies of `iclr25 icl-order` quoted by docs/icl-order.md (``python -m experiments``).

Each runs the real CLI; the command itself computes the verdicts (order matters or not,
the search's pass conditions against its controls) and says when an effect is absent.
"""

from __future__ import annotations

from experiments import Study

STUDIES = {
    "icl-order-sensitivity": Study(
        args=("icl-order", "sensitivity", "--draws", "20", "--queries", "40"),
        about="does order matter? embedded model, symbolic-noisy (the default), k = 4",
    ),
    "icl-order-sensitivity-symbolic": Study(
        args=("icl-order", "sensitivity", "--task", "symbolic", "--draws", "20", "--queries", "40"),
        about="the same on the noise-free symbolic task (the easy setting)",
    ),
    "icl-order-sensitivity-categories": Study(
        args=("icl-order", "sensitivity", "--task", "categories", "--draws", "20"),
        about="the same on natural labels the model knows without demonstrations",
    ),
    "icl-order-analysis": Study(
        args=("icl-order", "--no-cache", "--quick"),
        about="the bare analysis (clustering, sensitivity, search vs controls) at its --quick "
        "size (8 draws, 8 queries per seed, 3 seeds): run on 2 cores shared by many jobs",
    ),
}
