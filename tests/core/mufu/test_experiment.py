"""The embedded experiment: the shuffled control, gains and their intervals, the pass
conditions and verdict, and one tiny end-to-end run (identical in-process and with two
worker processes)."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.mufu import experiment_stats
from iclr25.core.mufu.chrf import segment_statistics
from iclr25.core.mufu.experiment import derangement
from iclr25.errors import UsageError


@pytest.mark.parametrize("n", [2, 3, 7, 200])
def test_shuffled_control_is_a_derangement(n):
    for seed in range(5):
        perm = derangement(n, seed)
        assert sorted(perm) == list(range(n))
        assert all(p != i for i, p in enumerate(perm))


def test_derangement_of_one_sentence_is_an_input_error():
    with pytest.raises(UsageError, match="at least 2 sentences"):
        derangement(1, 0)


def _stats(hyps, refs):
    return segment_statistics(hyps, refs)


def test_gain_of_a_better_arm_has_a_positive_interval_and_equal_arms_give_zero():
    rng = np.random.default_rng(0)
    refs = ["".join(rng.choice(list("abcdefgh"), size=30)) for _ in range(40)]
    poor = ["".join(rng.choice(list("abcdefgh"), size=30)) for _ in range(40)]
    stats = {"good": [_stats(refs, refs)] * 3, "poor": [_stats(poor, refs)] * 3}
    g = experiment_stats.gain(stats, "good", "poor", n_boot=200, seed=1)
    poor_chrf = experiment_stats.corpus_chrf(stats["poor"][0])
    assert (
        g["mean"] == pytest.approx(100.0 - poor_chrf)
        and 0 < g["ci95"][0] < g["mean"] < g["ci95"][1]
    )
    assert g["per_seed"] == [pytest.approx(g["mean"])] * 3
    same = experiment_stats.gain(stats, "poor", "poor", n_boot=50, seed=1)
    assert same["mean"] == 0 and same["ci95"] == [0.0, 0.0]


def _g(mean, lo, hi):
    return {"mean": mean, "ci95": [lo, hi], "per_seed": [mean]}


def test_conditions_and_verdict_name_the_failed_condition_with_numbers():
    gains = {
        "mufu_vs_plain": _g(-0.4, -1.1, 0.3),
        "mufu_vs_teacher": _g(3.0, 1.0, 5.0),
        "mufu_vs_shuffled": _g(1.0, 0.2, 2.0),
        "shuffled_vs_plain": _g(-1.4, -2.0, -0.5),
        "unrelated_vs_plain": None,
    }
    passed = experiment_stats.conditions(gains)
    assert passed == {
        "mufu_beats_plain": False,
        "mufu_beats_teacher": True,
        "shuffled_control": True,
    }
    text = experiment_stats.verdict(gains, passed)
    assert text.startswith("effect not reproduced (mufu_beats_plain)")
    assert "mufu − plain = -0.40 [-1.10, +0.30] chrF" in text
    gains["mufu_vs_plain"] = _g(2.0, 0.5, 3.5)
    gains["shuffled_vs_plain"] = _g(1.5, 0.1, 2.9)  # more than half of the mufu gain
    passed = experiment_stats.conditions(gains)
    assert passed["mufu_beats_plain"] and not passed["shuffled_control"]
    assert "against half of mufu − plain (+1.00)" in experiment_stats.verdict(gains, passed)
    gains["shuffled_vs_plain"] = _g(0.2, -0.5, 0.9)
    passed = experiment_stats.conditions(gains)
    assert all(passed.values())
    assert experiment_stats.verdict(gains, passed).startswith("effect reproduced")


@pytest.mark.slow  # two pretraining steps, 2 seeds x 3 arms, twice: minutes on a busy 2-core box
def test_tiny_experiment_runs_end_to_end_and_equals_across_backends(tmp_path, monkeypatch):
    """A base model of 2 pretraining steps (chrF near 0: this checks the plumbing, equal
    budgets and backend independence, not the effect)."""
    from iclr25.core.mufu.experiment import QUICK_ARMS, ExperimentConfig, run_experiment
    from iclr25.core.mufu.finetune import FinetuneConfig
    from iclr25.parallel import Execution

    monkeypatch.setenv("ICLR25_CACHE_DIR", str(tmp_path))
    config = ExperimentConfig(
        seeds=2,
        arms=QUICK_ARMS,
        n_train=6,
        n_valid=2,
        n_test=4,
        finetune=FinetuneConfig(epochs=1, batch_size=4, lr=1e-3, max_new_tokens=4),
        world_seed=0,
        pretrain_steps=2,
        n_boot=20,
        gen_batch=16,
    )
    one = run_experiment(config, Execution(workers=1, cache=False))
    assert set(one["chrf"]) == {"plain", "mufu", "shuffled", "teacher"}
    assert one["aux_langs"] == ["sam", "ser", "dov"]
    assert (
        one["budget_equal"]
        and one["budget"]["plain"]["steps"] == one["budget"]["mufu"]["steps"] == 2
    )
    assert one["budget"]["mufu"]["tokens"] > one["budget"]["plain"]["tokens"]  # longer prompts
    assert set(one["conditions"]) == set(experiment_stats.CONDITIONS)
    assert one["verdict"].startswith("effect")
    two = run_experiment(config, Execution(workers=2, cache=False))
    assert two == one


def test_without_the_shuffled_arm_its_condition_is_not_evaluated_and_the_run_cannot_pass():
    from iclr25.core.mufu.experiment import ExperimentConfig

    gains = {
        "mufu_vs_plain": _g(2.0, 0.5, 3.5),
        "mufu_vs_teacher": _g(3.0, 1.0, 5.0),
        "mufu_vs_shuffled": None,
        "shuffled_vs_plain": None,
        "unrelated_vs_plain": None,
    }
    passed = experiment_stats.conditions(gains)
    assert passed["shuffled_control"] is None and passed["mufu_beats_plain"] is True
    text = experiment_stats.verdict(gains, passed)
    assert text.startswith("no condition failed (shuffled_control not evaluated")
    gains["mufu_vs_plain"] = _g(-2.0, -3.5, -0.5)
    passed = experiment_stats.conditions(gains)
    text = experiment_stats.verdict(gains, passed)
    assert text.startswith("effect not reproduced (mufu_beats_plain) (shuffled_control not")
    assert ExperimentConfig(arms=("plain", "mufu")).all_arms() == ["plain", "mufu"]
    for arms in [("plain",), ("plain", "mufu", "mufu"), ("plain", "mufu", "other")]:
        with pytest.raises(UsageError, match="--arms"):
            ExperimentConfig(arms=arms)
