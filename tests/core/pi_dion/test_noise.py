"""The noise study: slope fit, bootstrap interval, pass rule and the plateau name."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.pi_dion import noise
from iclr25.core.pi_dion.problem import Problem
from iclr25.errors import UsageError


def test_predicted_slope_is_two_nu_over_two_nu_plus_four_plus_d():
    assert noise.predicted_slope(Problem()) == pytest.approx(0.5)  # 5 / (5 + 4 + 1)
    assert noise.predicted_slope(Problem(nu=1.5)) == pytest.approx(3 / 8)


def test_fit_slope_recovers_a_power_law():
    levels = np.array(noise.LEVELS)
    assert noise.fit_slope(levels, 3.0 * levels**0.37) == pytest.approx(0.37)


def _runs(levels, exponent, rng, n=200):
    """Per-instance squared errors whose root nMSE is levels**exponent (times noise)."""
    out = []
    for lv in levels:
        norm = np.ones(n)
        err = (lv**exponent) ** 2 * rng.uniform(0.5, 1.5, n)
        out.append({"sq_err": err.tolist(), "sq_norm": norm.tolist(), "rel_l2_f": 0.0})
    return out


def test_summarise_passes_the_rate_and_names_a_plateau():
    rng = np.random.default_rng(0)
    cfg = noise.NoiseConfig(methods=("bayes", "pi_dion"))
    results = _runs(cfg.levels, 0.5, rng) + _runs(cfg.levels, 0.1, rng)
    out = noise.summarise(cfg, results, seed=0)
    bayes, pid = out["fitted_slope"]["bayes"], out["fitted_slope"]["pi_dion"]
    assert bayes["ci_low"] <= 0.5 <= bayes["ci_high"] and bayes["slope"] == pytest.approx(
        0.5, abs=0.05
    )
    assert out["rate_reproduced"] == {"bayes": True, "pi_dion": False}
    assert "plateau" in out["verdict"] and pid["slope"] == pytest.approx(0.1, abs=0.05)


def test_bad_methods_and_levels():
    with pytest.raises(UsageError, match="pi_dion,tikhonov,bayes"):
        noise.check(noise.NoiseConfig(methods=("ridge",)))
    with pytest.raises(UsageError, match="3 positive"):
        noise.check(noise.NoiseConfig(levels=(0.01, 0.02)))


def test_recipe_options_are_checked():
    from iclr25.core.pi_dion import train

    train.check(train.TrainConfig(steps=3, batch=1000, lbfgs_steps=500))
    with pytest.raises(UsageError, match="--lbfgs-steps -1"):
        train.check(train.TrainConfig(lbfgs_steps=-1))
    with pytest.raises(UsageError, match="--batch"):
        train.check(train.TrainConfig(batch=0))


@pytest.mark.slow  # six tasks, each with the 2-D prior operators
def test_noise_in_2d_on_a_small_layout():
    from dataclasses import replace

    from iclr25.core.pi_dion.bayes2d import Layout2D
    from iclr25.parallel import Execution

    cfg = replace(noise.QUICK, problem=Problem(dim=2), methods=("tikhonov", "bayes"),
                  levels=(0.001, 0.01, 0.1), n_test=20,
                  layout2d=Layout2D(cells=8, fine_factor=2, side=4))  # fmt: skip
    res, _ = noise.run_noise(cfg, 0, Execution(cache=False))
    assert res["predicted_slope"] == pytest.approx(5 / 11)  # 2ν / (2ν + 4 + 2)
    assert res["problem"]["dim"] == 2
    bayes = res["root_nmse_f"]["bayes"]
    assert bayes[0] < bayes[1] < bayes[2]  # more noise, larger optimal error
    assert all(b <= t + 1e-12 for b, t in zip(bayes, res["root_nmse_f"]["tikhonov"], strict=True))
