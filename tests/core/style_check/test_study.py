"""The study's verdicts from per-seed figures (known answers, including the effect not
appearing), and the study run in-process and with --workers 2 giving the same results."""

from __future__ import annotations

import json

import pytest

from iclr25.core.style_check.study import CONDITIONS, METRICS, StudyConfig, aggregate, headline


def _seed(rates: dict[str, float]) -> dict:
    cell = lambda r: {m: r for m in METRICS} | {"n_attributed_not_unique": 0, "artists": []}  # noqa: E731
    return {
        "uniqueness": {"enc": {"mean_heldout_accuracy": 0.8, "n_unique": 6, "unique": {}}},
        "conditions": {c: {"enc": cell(rates[c])} for c in CONDITIONS},
    }


def _study(conditional: list[float], **others) -> dict:
    base = {"heldout": 0.9, "other_artists": 0.0, "unconditional": 0.125}
    base.update(others)
    seeds = [_seed({**base, "conditional": c}) for c in conditional]
    return aggregate(seeds, StudyConfig(n_artists=8))


def test_effect_appears_when_conditional_sets_are_attributed():
    res = _study([0.75, 0.625, 0.875])
    v = res["verdicts"]["enc"]
    assert all(v["checks"].values()) and v["effect_appeared"]
    assert res["conditions"]["conditional"]["enc"]["set_attribution_rate"]["mean"] == 0.75
    assert "attributed above chance (met)" in res["statement"]
    assert "0.75" in headline(res)


def test_effect_absent_is_said_plainly():
    res = _study([0.125, 0.25, 0.0])
    v = res["verdicts"]["enc"]
    assert not v["checks"]["P1"] and not v["effect_appeared"]
    assert "NOT attributed above chance at this size (not met)" in res["statement"]


def test_a_failed_control_is_named():
    """Conditional sets attributed, but so are the other artists' works: C2 fails."""
    res = _study([0.75, 0.625, 0.875], other_artists=0.5)
    v = res["verdicts"]["enc"]
    assert v["checks"]["P1"] and not v["checks"]["C2"] and not v["effect_appeared"]
    assert "control(s) C2 failed" in res["statement"]


def test_t_interval_known_answer():
    from iclr25.core.style_check.study import t_interval

    # mean 2, sd 1, n 3: half-width t_{0.975, 2} / sqrt(3) = 4.302653 / 1.732051
    out = t_interval([1.0, 2.0, 3.0], bounds=(-10, 10))
    assert abs(out["high"] - 2 - 4.302652729911275 / 3**0.5) < 1e-9
    assert t_interval([0.9, 1.0, 1.0])["high"] == 1.0  # a rate's interval is clipped


TINY = ("--artists", "4", "--works", "10", "--steps", "8", "--ssl-steps", "4", "--size", "8")


@pytest.mark.slow  # > 10 s: run by `make test-slow`
@pytest.mark.timeout(1200)  # ~40 s of CPU; far longer on a machine shared by many
def test_same_results_in_process_and_with_two_workers(cli):
    one = cli("style-check", "study", *TINY, "--no-cache", "--json", timeout=1200)
    two = cli("style-check", "study", *TINY, "--no-cache", "--json", "--workers", "2", timeout=1200)
    assert one.returncode == 0, one
    assert two.returncode == 0, two
    a, b = one.json(), two.json()
    assert json.dumps(a["results"], sort_keys=True) == json.dumps(b["results"], sort_keys=True)
    assert b["environment"]["execution"]["backend"] == "processes:2"
    res = a["results"]
    assert len(res["per_seed"]) == 3 and set(res["conditions"]) == set(CONDITIONS)
    assert set(res["verdicts"]) == {"style-stats", "ssl-cnn"}
    assert res["at_risk_not_unique"] == 0
    if not all(res["effect_appeared"].values()):  # said on stderr too, not only in JSON
        assert "Warning: " in one.stderr and res["statement"] in a["warnings"]
