"""Pass conditions of the mim-refine experiment: t-intervals, verdicts, headline, profile."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.mim_refine.experiment import (
    ARMS,
    ExperimentConfig,
    comparison_verdict,
    paired_interval,
    summarise,
    tasks,
)
from iclr25.core.mim_refine.profile import bootstrap_diff, verdict


def test_paired_interval_known_answer():
    # differences 1, 2, 3: mean 2, sd 1, t_{0.975, 2} = 4.302653 → half-width 2.484138
    ci = paired_interval([2.0, 4.0, 6.0], [1.0, 2.0, 3.0])
    assert ci["mean_diff"] == pytest.approx(2.0)
    assert ci["ci_low"] == pytest.approx(2 - 2.484138, abs=1e-6)
    assert ci["ci_high"] == pytest.approx(2 + 2.484138, abs=1e-6)
    assert comparison_verdict(ci["ci_low"], ci["ci_high"]) == "inconclusive"
    assert (
        comparison_verdict(0.01, 0.2) == "holds" and comparison_verdict(-0.2, -0.01) == "reversed"
    )


def fake_results(cfg, gain: float):
    rng = np.random.default_rng(0)
    out = []
    for task in tasks(cfg, 0):
        arm = task.config["arm"]
        base = 0.4 + (gain if arm == "nna_multi" else 0.0) + rng.normal(0, 0.002)
        res = {"knn_last": base, "probe_last": base + 0.1, "wall_s": 1.0}
        if arm == "mim":
            res.update(knn_best=base + 0.01, best_block=6)
        out.append(res)
    return out


@pytest.mark.parametrize(("gain", "holds"), [(0.05, True), (0.0, False), (-0.05, False)])
def test_headline_holds_only_when_all_four_comparisons_hold(gain, holds):
    cfg = ExperimentConfig(seeds=3)
    task_list = tasks(cfg, 0)
    assert len(task_list) == 3 * len(ARMS)
    res = summarise(cfg, task_list, fake_results(cfg, gain), profile={})
    assert res["headline_holds"] is holds
    assert res["headline"].startswith("reproduced" if holds else "not reproduced: ")
    assert len(res["arms"]["mim"]["knn_best"]) == 3 and res["comparisons"][0]["n_seeds"] == 3
    if gain < 0:
        assert {c["verdict"] for c in res["comparisons"][:4]} == {"reversed"}


def test_profile_verdict_rules_and_bootstrap():
    diff = bootstrap_diff(np.array([1, 1, 1, 0] * 50), np.array([0, 1, 1, 0] * 50), seed=0)
    assert diff["mean"] == pytest.approx(0.25) and 0.15 < diff["ci_low"] < 0.25 < diff["ci_high"]
    assert verdict(5, 7, 0.5, 0.1, diff) == "holds"
    assert verdict(7, 7, 0.5, 0.1, diff) == "fails"
    assert verdict(5, 7, 0.15, 0.1, diff) == "vacuous"
    assert verdict(5, 7, 0.5, 0.1, {"ci_low": -0.1, "ci_high": 0.1}) == "inconclusive"
    assert verdict(5, 7, 0.5, 0.1, {"ci_low": -0.2, "ci_high": -0.1}) == "fails"


def test_mae_lr_rule_picks_best_validation_knn_ties_to_smaller_lr():
    from iclr25.core.mim_refine.experiment import MAE_LR_GRID, choose_mae_lr, sweep_tasks

    runs = [{"lr": lr, "val_knn": acc, "wall_s": 1.0} for lr, acc in
            [(3e-5, 0.40), (1e-4, 0.45), (3e-4, 0.45), (1e-3, 0.30)]]  # fmt: skip
    sel = choose_mae_lr(runs)
    assert sel["chosen"] == 1e-4 and sel["grid"] == [3e-5, 1e-4, 3e-4, 1e-3]
    runs[2]["val_knn"] = 0.46
    assert choose_mae_lr(runs)["chosen"] == 3e-4
    sweep = sweep_tasks(ExperimentConfig(), 5)
    assert [t.config["lr"] for t in sweep] == list(MAE_LR_GRID)
    assert {t.seed for t in sweep} == {5}  # one seed: the run's


def test_mae_continued_uses_the_chosen_lr_and_summary_reports_it():
    cfg = ExperimentConfig(seeds=3, mae_lr=1e-4)
    task_list = tasks(cfg, 0)
    assert {t.config["experiment"]["mae_lr"] for t in task_list} == {1e-4}
    res = summarise(cfg, task_list, fake_results(cfg, 0.05), profile={}, mae_lr={"chosen": 1e-4})
    assert res["budget"]["mae_lr"] == 1e-4 and res["mae_lr_selection"]["chosen"] == 1e-4


def test_continue_mae_starts_from_the_trained_encoder_at_the_lr_it_is_given():
    import torch

    from iclr25.core.mim_refine.encoder import load_encoder
    from iclr25.core.mim_refine.experiment import continue_mae
    from iclr25.core.mim_refine.mae import load_mae

    torch.set_num_threads(1)
    enc = load_encoder(None)
    before = {k: v.clone() for k, v in enc.module.state_dict().items()}
    load_mae(enc)  # lightly's wrapper re-initialises a ViT unless told to skip
    assert all(torch.equal(v, before[k]) for k, v in enc.module.state_dict().items())
    cfg = ExperimentConfig(n_train=60, n_test=20, head_steps=0, steps=1, batch_size=8, lr=1e-3)
    images = torch.randint(0, 256, (60, 32, 32, 3), dtype=torch.uint8)
    continue_mae(enc, images, cfg, seed=0, lr=0.0)  # cfg.lr is 1e-3: must not be used
    assert all(torch.equal(v, before[k]) for k, v in enc.module.state_dict().items())
    continue_mae(enc, images, cfg, seed=0, lr=1e-3)
    key = "blocks.7.mlp.fc1.weight"
    assert not torch.equal(enc.module.state_dict()[key], before[key])


@pytest.mark.slow  # textures, training and k-NN: ~5 s quiet
def test_one_lr_of_the_sweep_scores_the_validation_split():
    from dataclasses import asdict

    from iclr25.core.mim_refine.experiment import run_mae_lr

    cfg = ExperimentConfig(n_train=60, n_test=20, head_steps=0, steps=2, batch_size=8)
    out = run_mae_lr({"lr": 3e-4, "experiment": asdict(cfg)}, seed=1)
    assert out["lr"] == 3e-4 and 0.0 <= out["val_knn"] <= 1.0
