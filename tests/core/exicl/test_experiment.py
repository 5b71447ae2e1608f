"""The headline experiment's bookkeeping: conditions, verdicts, and backend-independence."""

from __future__ import annotations

import pytest

from iclr25.core.exicl import experiment as E
from iclr25.parallel import Execution


def _methods(wall_exicl, wall_control, box_exicl, wall_maxent=(1, 1, 1), share=0.9):
    def entry(values, sh=share):
        mean, ci = E.t_interval(values)
        return {"n_distinct_feasible": {"per_seed": list(values), "mean": mean, "ci95": ci},
                "exact_feasible_share": {"per_seed": [sh] * len(values), "mean": sh,
                                         "ci95": None}}  # fmt: skip

    return {
        "wall": {"exicl": entry(wall_exicl), "control": entry(wall_control),
                 "maxent": entry(wall_maxent)},
        "box": {"exicl": entry(box_exicl), "control": entry(box_exicl),
                "maxent": entry(box_exicl)},
    }  # fmt: skip


def test_conditions_pass_and_fail_on_hand_made_numbers():
    good = E.conditions(_methods([3, 4, 3], [1, 2, 1], [1, 1, 1]))
    assert all(c["passed"] for c in good.values())
    verdict, summary = E.verdict_line(good)
    assert verdict == "reproduced" and summary == "reproduced: P1–P4 hold"
    bad = E.conditions(_methods([2, 1, 2], [2, 1, 1], [2, 1, 2], (2, 1, 1), share=0.5))
    assert not any(bad[p]["passed"] for p in ("P1", "P2", "P3", "P4"))
    verdict, summary = E.verdict_line(bad)
    assert verdict == "not reproduced" and summary.startswith("NOT reproduced: P1 (0.50 vs 0.80")
    assert "P2 (0.33 vs 1.00" in summary


def test_p2_needs_a_mean_gain_of_one_and_a_ci_above_zero():
    # mean gain 1 with zero spread: CI [1, 1] → passes; mean 0.67 → fails the margin
    assert E.conditions(_methods([3, 3, 3], [1, 1, 1], [1, 1, 1], (2, 2, 2)))["P2"]["passed"]
    assert not E.conditions(_methods([3, 3, 2], [1, 1, 1], [1, 1, 1], (2, 2, 2)))["P2"]["passed"]


def test_t_interval_known_answer():
    mean, (lo, hi) = E.t_interval([1.0, 2.0, 3.0])
    # t(0.975, 2) = 4.302653; sd = 1; half = 4.302653 / √3 = 2.484138
    assert mean == 2.0 and lo == pytest.approx(2 - 2.484138, abs=1e-6)
    assert hi == pytest.approx(2 + 2.484138, abs=1e-6)


@pytest.mark.slow
def test_results_identical_in_process_and_with_two_workers():
    config = E.ExperimentConfig(seeds=2, k=1, rounds=1, samples=2)
    one, _ = E.run_experiment(config, 3, Execution(workers=1, cache=False))
    two, _ = E.run_experiment(config, 3, Execution(workers=2, cache=False))
    assert one == two
