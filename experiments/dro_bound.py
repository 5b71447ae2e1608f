"""Studies of `iclr25 dro-bound` quoted by docs/dro-bound.md (``python -m experiments run``).

Each coverage study states its hypothesis, control (ρ = 0) and pass conditions in the
command's own output (:mod:`iclr25.core.dro_bound.coverage_report`); trials run on two
worker processes (the results do not depend on the backend), with the task cache on, so
that a rerun after an interruption only computes the missing trials.
"""

from experiments import Study

STUDIES = {
    "dro-bound-coverage": Study(
        args=(
            "dro-bound", "coverage", "--n-grid", "200,800,3200", "--d-grid", "2,10,50",
            "--trials", "40", "--bootstrap", "30", "--workers", "2",
        ),
        about="calibrated radius (c from 30 % held-out rows) on Gaussian classes, logistic "
        "loss, q = 1: coverage of θ̂ and uniformly over a θ set, gap slope vs −1/2; "
        "control ρ = 0; 40 trials per cell",
    ),
    "dro-bound-coverage-bounded": Study(
        args=(
            "dro-bound", "coverage", "--distribution", "ball-classes", "--n-grid",
            "200,800,3200", "--d-grid", "2,10", "--trials", "40", "--bootstrap", "30",
            "--workers", "2",
        ),
        about="bounded Gaussian-like classes: the theory radius (a proof) against the "
        "calibrated one and the control, 40 trials per cell",
    ),
    "dro-bound-coverage-entropic": Study(
        args=(
            "dro-bound", "coverage", "--n-grid", "200,800", "--d-grid", "5", "--trials", "40",
            "--kinds", "user", "--radius-constant", "0.5", "--epsilon", "0.01",
            "--samples", "32", "--workers", "2",
        ),
        about="entropic risk (ε = 0.01, c = 0.5 given): coverage of the smoothed true risk "
        "it bounds, and of the plain true risk it does not, 40 trials per cell",
    ),
    "dro-bound-coverage-entropic-wide": Study(
        args=(
            "dro-bound", "coverage", "--n-grid", "200,800", "--d-grid", "5", "--trials", "40",
            "--kinds", "user", "--radius-constant", "2", "--epsilon", "0.01", "--sigma", "0.1",
            "--samples", "32", "--workers", "2",
        ),
        about="entropic risk with a wider reference (σ = 0.1 fixed) and c = 2 (ρ well above "
        "the reference's mean cost): does the margin over the smoothed risk follow σ?",
    ),
    "dro-bound-certify": Study(
        args=("dro-bound", "certify", "--synthetic", "gaussian-classes", "--bootstrap", "60"),
        about="the demo: certify with the calibrated radius on n = 500, d = 5",
    ),
}  # fmt: skip
