"""Paired tests, Holm's correction and the verdict of `compare` on hand-made outcomes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sp

from iclr25.core.diffusion_at.samplers import SamplerSpec
from iclr25.core.diffusion_at.stats import holm, paired_test, summary
from iclr25.core.diffusion_at.verdict import decide, headline, mismatch_table, per_nfe_table

VARIANTS = ("baseline", "at", "replay", "noise")


def test_paired_test_matches_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=6), rng.normal(size=6) + 0.5
    ours = paired_test(a - b)
    ref = sp.ttest_rel(a, b)
    assert ours["p_value"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert ours["t"] == pytest.approx(ref.statistic, rel=1e-12)
    low, high = sp.t.interval(0.95, 5, loc=np.mean(a - b), scale=sp.sem(a - b))
    assert (ours["low"], ours["high"]) == pytest.approx((low, high), rel=1e-12)


def test_paired_test_degenerate_cases():
    assert paired_test([0.0, 0.0, 0.0])["p_value"] == 1.0
    assert paired_test([0.5, 0.5, 0.5])["p_value"] == 0.0  # no spread, non-zero mean
    assert paired_test([0.1, 0.1, 0.1])["p_value"] < 1e-12  # spread of float rounding only
    assert paired_test([0.1])["p_value"] != paired_test([0.1])["p_value"]  # NaN
    assert summary([1.0])["low"] != summary([1.0])["low"]


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 → 3·0.01 = 0.03, max(0.03, 2·0.03) = 0.06, max(0.06, 0.04)
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    out = holm([0.02, float("nan")])
    assert out[0] == pytest.approx(0.02) and out[1] != out[1]


def _outcomes(effects: dict[str, list[float]], seeds: int = 5, noise: float = 0.01):
    """Per-seed task outcomes with metric ``sw`` = 1 + effect + seed noise (shared by all
    variants of a seed, as with paired runs) + a small independent jitter."""
    rng = np.random.default_rng(1)
    out = []
    for _ in range(seeds):
        shared = rng.normal() * 0.2
        seed_out = {}
        for v in VARIANTS:
            rows = [
                {"sw": 1 + e + shared + noise * rng.normal(), "w2": 1.0, "mmd": 0.1}
                for e in effects[v]
            ]
            curve = [{"step": 0, "t": 9, "mmd": 0.1 + effects[v][0] + shared, "sw": 0.5}]
            seed_out[v] = {"rows": rows, "curve": curve}
        out.append(seed_out)
    return out


SPECS = (SamplerSpec("ddim", 3), SamplerSpec("ddim", 20))


def _verdict(effects):
    outcomes = _outcomes(effects)
    rows = per_nfe_table(outcomes, VARIANTS, SPECS, ("sw", "w2", "mmd"), "sw")
    return rows, decide(rows, VARIANTS, 5), outcomes


def test_an_adversarial_effect_is_recognised():
    rows, verdict, _ = _verdict(
        {"baseline": [0, 0], "at": [-0.3, 0], "replay": [0, 0], "noise": [0, 0]}
    )
    assert rows[0]["significant"] == ["at"] and rows[1]["significant"] == []
    assert verdict["paper_claim_observed"] and verdict["adversarial_effect_observed"]
    assert verdict["adversarial_nfe"] == [3]
    assert "gain is adversarial" in verdict["statement"]


def test_a_gain_the_replay_control_also_shows_is_not_called_adversarial():
    rows, verdict, _ = _verdict(
        {"baseline": [0, 0], "at": [-0.3, 0], "replay": [-0.3, 0], "noise": [0, 0]}
    )
    assert rows[0]["significant"] == ["at", "replay"]
    assert verdict["paper_claim_observed"] and verdict["adversarial_effect_observed"] is False
    assert "H2 not met" in verdict["statement"]


def test_no_effect_and_a_harmful_one_are_said_plainly():
    _, verdict, _ = _verdict({"baseline": [0, 0], "at": [0, 0], "replay": [0, 0], "noise": [0, 0]})
    assert verdict["statement"].startswith("No variant is significantly better")
    rows, verdict, _ = _verdict(
        {"baseline": [0, 0], "at": [0.3, 0.3], "replay": [0, 0], "noise": [0, 0]}
    )
    assert rows[0]["versus_baseline"]["at"]["p_holm"] < 0.05  # significant, but worse
    assert verdict["at_better_nfe"] == [] and not verdict["paper_claim_observed"]


def test_a_gain_at_large_nfe_only_does_not_meet_h1():
    _, verdict, _ = _verdict(
        {"baseline": [0, 0], "at": [0, -0.3], "replay": [0, 0], "noise": [0, 0]}
    )
    assert verdict["at_better_nfe"] == [20] and not verdict["paper_claim_observed"]
    assert "H1 not met" in verdict["statement"]


def test_mismatch_table_marks_where_at_raises_it():
    _, _, outcomes = _verdict(
        {"baseline": [0, 0], "at": [0.2, 0], "replay": [0, 0], "noise": [0, 0]}
    )
    table = mismatch_table(outcomes, VARIANTS)
    assert table["at_raises_t"] == [9] and table["at_lowers_t"] == []


def test_headline_names_every_variant_and_the_verdict():
    rows, verdict, _ = _verdict(
        {"baseline": [0, 0], "at": [0, 0], "replay": [0, 0], "noise": [0, 0]}
    )
    results = {
        "data": "toy",
        "primary_metric": "sw",
        "primary_label": "SW₂",
        "variants": list(VARIANTS),
        "per_nfe": rows,
        "verdict": verdict,
    }
    line = headline(results)
    assert line.startswith("toy NFE 3 SW₂: baseline ") and "noise " in line
    assert line.endswith(verdict["statement"])
