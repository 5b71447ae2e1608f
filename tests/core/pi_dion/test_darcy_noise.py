"""`noise --pde darcy`: no predicted slope, paired bootstrap of the slope difference, the
growth names, the method checks, and one tiny end-to-end run."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.pi_dion import darcy_noise
from iclr25.core.pi_dion.recipe import TrainConfig
from iclr25.errors import UsageError
from iclr25.parallel import Execution


def _runs(levels, exponent, rng, n=200, trained=True):
    out = []
    for lv in levels:
        err = (lv**exponent) ** 2 * rng.uniform(0.5, 1.5, n)
        out.append({"sq_err": err.tolist(), "sq_norm": np.ones(n).tolist(), "rel_l2_a": 0.0,
                    "train_loss": {"adam": [], "final": 0.1} if trained else None})  # fmt: skip
    return out


@pytest.mark.parametrize(("pid", "name"), [(0.1, "flatter"), (0.9, "steeper"), (0.5, "no diff")])
def test_summarise_reports_no_prediction_and_names_the_growth(pid, name):
    rng = np.random.default_rng(0)
    cfg = darcy_noise.DarcyNoiseConfig()
    results = _runs(cfg.levels, pid, rng) + _runs(cfg.levels, 0.5, rng, trained=False)
    out = darcy_noise.summarise(cfg, results, seed=0)
    assert out["predicted_slope"] is None and out["rate_reproduced"] is None
    assert "does not apply" in out["predicted_slope_reason"]
    fit, diff = out["fitted_slope"], out["slope_pi_dion_minus_tikhonov"]
    assert fit["pi_dion"]["slope"] == pytest.approx(pid, abs=0.05)
    assert fit["tikhonov"]["ci_low"] <= 0.5 <= fit["tikhonov"]["ci_high"]
    assert diff["slope"] == pytest.approx(fit["pi_dion"]["slope"] - fit["tikhonov"]["slope"])
    assert name in out["verdict"] and "no predicted slope" in out["verdict"]
    assert list(out["final_train_loss"]) == ["pi_dion"]


def test_bayes_and_unknown_methods_are_refused():
    with pytest.raises(UsageError, match="nonlinear"):
        darcy_noise.check(darcy_noise.DarcyNoiseConfig(methods=("pi_dion", "bayes")))
    with pytest.raises(UsageError, match="pi_dion,tikhonov"):
        darcy_noise.check(darcy_noise.DarcyNoiseConfig(methods=("ridge",)))
    with pytest.raises(UsageError, match="3 positive"):
        darcy_noise.check(darcy_noise.DarcyNoiseConfig(levels=(0.01, 0.02)))


def test_a_tiny_darcy_noise_run_end_to_end():
    tiny = TrainConfig(steps=2, batch=4, width=8, basis=4)
    cfg = darcy_noise.DarcyNoiseConfig(levels=(0.005, 0.01, 0.05), n_train=4, n_test=3, train=tiny)
    out, _ = darcy_noise.run_noise(cfg, 0, Execution(cache=False))
    assert out["methods"] == ["pi_dion", "tikhonov"] and out["predicted_slope"] is None
    assert len(out["root_nmse_a"]["tikhonov"]) == 3
    assert all(np.isfinite(out["fitted_slope"][m]["slope"]) for m in out["methods"])
    # Tikhonov at the true σ: a finer noise gives a smaller error of a
    assert out["root_nmse_a"]["tikhonov"][0] < out["root_nmse_a"]["tikhonov"][-1]
    assert set(out["problem"]["noise_std_per_level"]) == {"0.005", "0.01", "0.05"}


def test_a_breakdown_is_named_and_the_growth_read_from_the_medians():
    """Tikhonov with a few runaway instances at the two top levels: their root nMSE slope
    measures the breakdown; the verdict names it and compares the median slopes."""
    rng = np.random.default_rng(1)
    cfg = darcy_noise.DarcyNoiseConfig()
    tik = _runs(cfg.levels, 0.6, rng, trained=False)
    for run, bad in zip(tik[-2:], (3, 20), strict=True):
        run["sq_err"][:bad] = [1e6] * bad  # rel. L² 1000: worse than â = 0
    out = darcy_noise.summarise(cfg, _runs(cfg.levels, 0.2, rng) + tik, seed=0)
    assert out["breakdowns"] == {"pi_dion": [0] * 6, "tikhonov": [0, 0, 0, 0, 3, 20]}
    assert out["fitted_slope"]["tikhonov"]["slope"] > 2  # the runaways dominate
    assert out["fitted_slope_median"]["tikhonov"]["slope"] == pytest.approx(0.6, abs=0.1)
    assert "tikhonov breaks down at noise 0.02, 0.05" in out["verdict"]
    assert "flatter" in out["verdict"] and "median slopes" in out["verdict"]
