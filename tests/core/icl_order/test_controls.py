"""Search against its controls: paired tests, intervals and pass conditions."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.icl_order.controls import (
    bootstrap_mean,
    compare_methods,
    mcnemar_exact,
    pass_conditions,
    verdict_line,
)


def test_mcnemar_exact_known_answer():
    # 8 queries only the first method gets right, 2 only the second: two-sided exact
    # binomial p = 2 * P(X <= 2 | n = 10, 1/2) = 2 * (1 + 10 + 45) / 1024 = 0.109375
    a = np.array([1] * 8 + [0] * 2 + [1] * 5, dtype=bool)
    b = np.array([0] * 8 + [1] * 2 + [1] * 5, dtype=bool)
    out = mcnemar_exact(a, b)
    assert out["only_first_right"] == 8 and out["only_second_right"] == 2
    assert out["p_value"] == pytest.approx(0.109375)
    assert mcnemar_exact(a, a)["p_value"] == 1.0


def test_bootstrap_interval_covers_the_mean_and_shrinks_with_n():
    rng = np.random.default_rng(0)
    small = rng.random(50) < 0.7
    large = rng.random(5000) < 0.7
    lo_s, hi_s = bootstrap_mean(small.astype(float), 2000, np.random.default_rng(1))
    lo_l, hi_l = bootstrap_mean(large.astype(float), 2000, np.random.default_rng(1))
    assert lo_s <= small.mean() <= hi_s and lo_l <= large.mean() <= hi_l
    assert hi_l - lo_l < (hi_s - lo_s) / 5  # ~ 1/sqrt(100) of the width
    # the binomial standard error: 0.7 * 0.3 / 5000 -> half-width ~ 1.96 * 0.00648
    assert (hi_l - lo_l) / 2 == pytest.approx(1.96 * np.sqrt(0.21 / 5000), rel=0.15)


def _correct(rng, n, p):
    return list(rng.random(n) < p)


def test_compare_methods_and_pass_conditions():
    rng = np.random.default_rng(3)
    n = 600
    ex = np.array(_correct(rng, n, 0.8))
    cluster = ex.copy()
    cluster[:6] = ~cluster[:6]  # disagrees with exhaustive on 6 queries
    sample = np.array(_correct(rng, n, 0.5))  # clearly worse
    seeds = [i % 3 for i in range(n)]
    comp = compare_methods(
        {"cluster": cluster, "exhaustive": ex, "sample": sample}, seeds, resamples=1000
    )
    assert comp["methods"]["cluster"]["accuracy"] == pytest.approx(cluster.mean())
    assert len(comp["methods"]["sample"]["accuracy_by_seed"]) == 3
    vs_sample = comp["paired"]["cluster_vs_sample"]
    assert vs_sample["significant"] and vs_sample["interval"][0] > 0
    vs_ex = comp["paired"]["cluster_vs_exhaustive"]
    assert not vs_ex["significant"] and abs(vs_ex["difference"]) <= 6 / n
    rows = {r["name"]: r for r in pass_conditions(comp, {"cluster": 56, "exhaustive": 1680})}
    assert rows["keeps_exhaustive_accuracy"]["verdict"] == "met"
    assert rows["beats_equal_budget_control"]["verdict"] == "met"
    assert rows["saves_evaluations"]["measured"] == pytest.approx(1 - 56 / 1680)
    line = verdict_line(comp)
    assert "cluster vs sample" in line and "(significant)" in line
    assert "cluster vs exhaustive" in line and "(not significant)" in line


def test_a_worse_cluster_fails_its_conditions():
    rng = np.random.default_rng(4)
    ex = np.array(_correct(rng, 400, 0.8))
    cluster = ex & (rng.random(400) < 0.8)  # loses a fifth of exhaustive's hits
    sample = ex.copy()
    comp = compare_methods({"cluster": cluster, "exhaustive": ex, "sample": sample}, [0] * 400)
    rows = {r["name"]: r for r in pass_conditions(comp, {})}
    assert rows["keeps_exhaustive_accuracy"]["verdict"] == "not met"
    assert rows["beats_equal_budget_control"]["verdict"] == "not met"
    assert rows["saves_evaluations"]["verdict"] == "not measured"


def test_no_significant_difference_is_said_plainly():
    same = [True, False] * 20
    comp = compare_methods({"cluster": same, "sample": same}, [0] * 40, resamples=200)
    assert verdict_line(comp).endswith("no significant difference at this size")


def _analysis_results(flip, verdict, significant):
    pair = {"difference": 0.01, "interval": [-0.01, 0.03], "p_value": 0.2}
    return {
        "sensitivity": {
            "flip_rate": {"value": flip, "interval": [flip - 0.01, flip + 0.01]},
            "accuracy_spread": {"value": 0.2, "interval": [0.1, 0.3]},
        },
        "order_verdict": verdict,
        "search": {
            "comparison": {m: {"accuracy": a} for m, a in (("cluster", 0.7), ("sample", 0.6))},
            "evaluations_saved_vs_exhaustive": 0.967,
            "paired": {"cluster_vs_sample": {**pair, "significant": significant}},
        },
    }


def test_headline_says_what_was_measured_and_nothing_more():
    from iclr25.core.icl_order.headline import headline

    loud = headline(_analysis_results(0.3, "order matters: ...", True))
    assert loud.startswith("order flips 30% of predictions [29, 31]")
    assert "cluster acc 0.70 vs sample 0.60 with 97% fewer evaluations" in loud
    assert loud.endswith("significant: cluster vs sample")
    quiet = headline(_analysis_results(0.01, "order changes ≤ 2.0% of predictions: ...", False))
    assert quiet.startswith("order changes ≤ 2.0% of predictions")
    assert quiet.endswith("no significant difference at this size")
