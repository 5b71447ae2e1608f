"""The compare study: matching rule, intervals, the Bayes-floor check, backends agree."""

import inspect
from dataclasses import replace

import numpy as np
import pytest

from iclr25.core.pi_dion import compare, train
from iclr25.core.pi_dion.problem import Problem
from iclr25.errors import RunFailure
from iclr25.parallel import Execution

TINY = compare.CompareConfig(
    Problem(), n_train=20, n_test=6, seeds=3, labels=(5, 10),
    train=train.TrainConfig(steps=3, batch=10, collocation=16, width=8, basis=4),
)  # fmt: skip


def test_labels_to_match_log_interpolates():
    # errors 0.4 at N=10 and 0.1 at N=100: 0.2 is half-way in log error → N = 10^1.5
    n, where = compare.labels_to_match([10, 100], [0.4, 0.1], 0.2)
    assert where == "matched" and n == pytest.approx(10**1.5)
    assert compare.labels_to_match([10, 100], [0.1, 0.05], 0.2) == (None, "below_grid")
    assert compare.labels_to_match([10, 100], [0.5, 0.3], 0.2) == (None, "above_grid")


def test_t_interval_by_hand():
    mean, low, high = compare.t_interval([1.0, 2.0, 3.0])
    # sd = 1, t_{0.975, 2} = 4.302653
    assert mean == 2.0 and high - mean == pytest.approx(4.302653 / np.sqrt(3), rel=1e-6)


def test_a_method_below_the_bayes_floor_is_a_failure():
    base = {"rel_l2_f": 0.1, "rel_l2_u": 0.01, "sq_norm_f": 1.0, "inference_ms_per_instance": 1}
    good = {**base, "sq_err_f": list(np.linspace(1.0, 2.0, 50))}
    bad = {**base, "sq_err_f": list(np.linspace(0.1, 0.2, 50))}
    cfg = replace(TINY, labels=(5,))
    names = compare.methods(cfg)  # pi_dion, supervised_N5, tikhonov, tikhonov_gcv, bayes
    ok = [good] * len(names) * cfg.seeds
    compare.summarise(cfg, ok)
    broken = [bad if n == "tikhonov" else good for n in names] * cfg.seeds
    with pytest.raises(RunFailure, match="Bayes"):
        compare.summarise(cfg, broken)


def test_1d_compare_has_a_gcv_tikhonov_row():
    assert compare.methods(TINY)[-3:] == ["tikhonov", "tikhonov_gcv", "bayes"]
    assert "tikhonov_gcv" not in compare.methods(replace(TINY, problem=Problem(dim=2)))


@pytest.mark.parametrize("pde", ["reaction-diffusion", "helmholtz"])
def test_gcv_without_the_noise_level_lands_near_the_discrepancy_principle(monkeypatch, pde):
    # 100 held-out instances (seed TEST_SEED). Plain GCV's mean f error was 2.2×
    # (reaction-diffusion) and 2.6× (helmholtz) the discrepancy principle's: on ~10 % of
    # instances its minimum sat at α → 0 (the noise interpolated). Robust GCV (the default,
    # tikhonov module docstring) must not fall into that: mean f and u errors within 1.25×
    # the discrepancy principle's, and at most 3 of 100 instances with an f error > 2×
    # the discrepancy principle's (plain GCV: ~10; measured with robust GCV: 0–1 per 100)
    cfg = replace(TINY, problem=Problem(pde=pde), n_test=100)
    dp = compare.run_method(compare.MethodTask(cfg, "tikhonov", 5), 1)

    def no_noise_level(*args, **kwargs):
        raise AssertionError("the GCV row must not use the noise level")

    monkeypatch.setattr(compare.tikhonov, "choose_alpha", no_noise_level)
    gcv = compare.run_method(compare.MethodTask(cfg, "tikhonov_gcv", 5), 1)
    assert gcv["rel_l2_f"] <= 1.25 * dp["rel_l2_f"]
    assert gcv["rel_l2_u"] <= 1.25 * dp["rel_l2_u"]
    ratio = np.sqrt(np.asarray(gcv["sq_err_f"]) / np.asarray(dp["sq_err_f"]))
    assert (ratio > 2).sum() <= 3


def test_pi_dion_training_never_receives_f():
    params = list(inspect.signature(train.train_pi_dion).parameters)
    assert params == ["d", "sensors", "c", "cfg", "seed", "progress", "group", "on_loss"]


def test_same_seed_same_results():
    cfg = replace(TINY, seeds=2, labels=(5,))
    a, _ = compare.run_compare(cfg, 11, Execution(cache=False))
    b, _ = compare.run_compare(cfg, 11, Execution(cache=False))
    a.pop("inference_ms_per_instance"), b.pop("inference_ms_per_instance")
    assert a == b
    f = a["rel_l2_f"]["pi_dion"]
    assert f["ci_low"] < f["ci_high"]  # the two seeds' networks differ: the seed matters


@pytest.mark.slow  # two worker processes (each imports torch): ~15 CPU-s
def test_same_results_in_process_and_with_two_workers(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cfg = replace(TINY, seeds=2, labels=(5,))  # 8 tasks: enough for both workers
    a, _ = compare.run_compare(cfg, 11, Execution(cache=False))
    b, _ = compare.run_compare(cfg, 11, Execution(workers=2, cache=False))
    a.pop("inference_ms_per_instance"), b.pop("inference_ms_per_instance")
    assert a == b
    assert a["rel_l2_f"]["bayes"]["mean"] <= a["rel_l2_f"]["tikhonov"]["mean"] + 0.05
    assert set(a["rel_l2_f"]) == {"pi_dion", "supervised_N5", "tikhonov", "tikhonov_gcv", "bayes"}
    # every trained network's final loss, per seed; none for the references
    assert set(a["final_train_loss"]) == {"pi_dion", "supervised_N5"}
    assert all(len(v) == 2 and np.all(np.isfinite(v)) for v in a["final_train_loss"].values())


def test_a_trained_task_records_its_loss_curve(monkeypatch):
    losses = [float(v) for v in range(300)]  # the loss of step k (1-based) is k − 1
    assert train.loss_curve(losses, 1.0) == {"adam": [99.0, 199.0, 299.0], "final": 1.0}
    assert train.loss_curve([], None) is None  # nothing trained
    monkeypatch.setattr(train, "LOSS_EVERY", 2)  # a point every 2nd step: 3 steps → 1 point
    task = compare.MethodTask(TINY, "pi_dion", 5)
    curve = compare.run_method(task, 1)["train_loss"]
    assert len(curve["adam"]) == 1 and np.isfinite(curve["final"])
    assert "train_loss" not in compare.run_method(replace(task, method="bayes"), 1)


def test_subdomain_sensors_report_outside_errors():
    cfg = replace(TINY, problem=Problem(sensors="subdomain:0,0.5"), seeds=2, labels=(5,))
    res, _ = compare.run_compare(cfg, 2, Execution(cache=False))
    # hull (0.5/65, 32/65) reaches x = 0 (within one sensor gap; u(0) = 0 is known)
    assert res["identifiable_fraction"] == pytest.approx(0.5 * 64 / 65, rel=1e-9)
    outside = res["rel_l2_f_outside"]["bayes"]["mean"]
    inside = res["rel_l2_f_inside"]["bayes"]["mean"]
    assert outside > 3 * inside  # f beyond the sensors is not determined by the data
    assert "no stability estimate" in res["verdict"]


def test_verdict_names_the_pass_condition_and_multiples():
    base = {"rel_l2_f": 0.1, "rel_l2_u": 0.01, "sq_norm_f": 1.0, "inference_ms_per_instance": 1}
    cfg = replace(TINY, labels=(10, 100, 1000))
    errs = {"pi_dion": 0.3, "supervised_N10": 0.6, "supervised_N100": 0.4,
            "supervised_N1000": 0.2, "tikhonov": 0.2, "tikhonov_gcv": 0.25,
            "bayes": 0.1}  # fmt: skip
    rows = [
        {**base, "rel_l2_f": errs[n], "sq_err_f": list(np.linspace(1, 2, 9) * (1 + (n != "bayes")))}
        for n in compare.methods(cfg)
    ] * cfg.seeds
    res = compare.summarise(cfg, rows)
    # log-interpolation between N = 100 (0.4) and N = 1000 (0.2) at 0.3
    expected = 10 ** (2 + (np.log(0.4) - np.log(0.3)) / (np.log(0.4) - np.log(0.2)))
    assert res["labels_to_match"] == pytest.approx(expected)
    assert res["effect_reproduced"] is True
    assert "1.50× Tikhonov" in res["verdict"] and "3.00× the Bayes floor" in res["verdict"]


@pytest.mark.slow  # ~13 CPU-s: 15 tasks, each with the 2-D prior operators
def test_compare_in_2d_on_a_small_layout():
    from iclr25.core.pi_dion.bayes2d import Layout2D

    cfg = replace(TINY, problem=Problem(dim=2), layout2d=Layout2D(cells=8, fine_factor=2, side=4))
    res, _ = compare.run_compare(cfg, 3, Execution(cache=False))  # the floor check passes
    assert res["problem"]["dim"] == 2 and res["problem"]["n_sensors"] == 16
    assert set(res["rel_l2_f"]) == {"pi_dion", "supervised_N5", "supervised_N10", "tikhonov",
                                    "bayes"}  # fmt: skip
    assert res["rel_l2_f"]["bayes"]["mean"] < 0.6  # the exact mean is informative
    assert res["nmse_f"]["bayes"] <= min(res["nmse_f"].values()) + 1e-12
    assert res["rel_l2_u"]["pi_dion"] is not None and res["rel_l2_u"]["supervised_N5"] is None
