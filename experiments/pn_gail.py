"""Studies of `iclr25 pn-gail` whose documents docs/pn-gail.md quotes."""

from __future__ import annotations

from experiments import Study

STUDIES = {
    "pn-gail-compare": Study(
        args=("pn-gail", "compare", "--seeds", "5", "--steps", "200000", "--workers", "2"),
        about="the headline at the issue's size: PN-GAIL vs GAIL, 2IWIL, IC-GAIL, BC with "
        "controls A and B, 5 seeds × 200k steps (≤ 30 min on an idle 2-core machine)",
    ),
    "pn-gail-compare-reduced": Study(
        args=(
            "pn-gail",
            "compare",
            "--seeds",
            "3",
            "--steps",
            "50000",
            "--methods",
            "gail,pn-gail,pn-gail-shuffled,bc,weighted-bc",
            "--classifier-steps",
            "1000",
            "--workers",
            "2",
        ),
        about="what a heavily loaded shared 2-core machine could finish before the "
        "deadline: 3 seeds × 50k steps (25 rollouts), the gated methods only (GAIL, PN-GAIL, "
        "shuffled PN-GAIL; BC and weighted BC), 1,000 classifier steps; 2IWIL and IC-GAIL "
        "(reported, not gated) left out. Smaller than the prototype's 100k, where the gap "
        "was largest: the effect may not have formed yet at this budget",
    ),
    "pn-gail-fixed-point": Study(
        args=("pn-gail", "fixed-point"),
        about="the note's one-state game: closed-form fixed points against adversarial play",
    ),
    "pn-gail-confidence": Study(
        args=("pn-gail", "confidence"),
        about="balanced classifier on generated demos (80 % non-optimal, 20 % labelled)",
    ),
}
