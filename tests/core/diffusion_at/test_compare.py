"""`compare` as seed × variant tasks: the same results on every backend, cache reuse."""

from __future__ import annotations

import dataclasses

import pytest

from iclr25.core.diffusion_at.adversarial import ATConfig
from iclr25.core.diffusion_at.compare import (
    CompareConfig,
    run_compare,
    seeds_for,
    tasks_for,
    variants_for,
)
from iclr25.core.diffusion_at.evaluation import EvalConfig
from iclr25.core.diffusion_at.samplers import SamplerSpec
from iclr25.parallel import Execution


@pytest.fixture
def config(small_config):
    base = small_config(steps=8, at_start=4, diffusion_steps=50)
    return CompareConfig(
        base=base,
        at=ATConfig("free", alpha=0.05),
        seeds=seeds_for(0, 2),
        samplers=(SamplerSpec("ddim", 2), SamplerSpec("ddim", 5)),
        eval=EvalConfig(120, 120, 60),
        mismatch=SamplerSpec("ddim", 5),
        mismatch_n=100,
    )


def test_tasks_are_seed_major_and_share_the_seed_across_variants(config):
    tasks = tasks_for(config)
    assert [(t.config.variant, t.seed) for t in tasks[:4]] == [
        (v, config.seeds[0]) for v in ("baseline", "at", "replay", "noise")
    ]
    assert tasks[0].config.train.at == ATConfig() and tasks[1].config.train.at == config.at
    assert {t.config.train.at.method for t in tasks} == {"none", "free", "replay", "noise"}
    assert variants_for(ATConfig("fgsm", alpha=0.1)) == ("baseline", "at")
    assert seeds_for(0, 3) != seeds_for(1, 3) and seeds_for(0, 2) == seeds_for(0, 3)[:2]


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_results_are_identical_in_process_and_on_two_workers(config, tmp_path, monkeypatch):
    monkeypatch.setenv("ICLR25_CACHE_DIR", str(tmp_path))
    serial, outcome, _ = run_compare(config, Execution(cache=True))
    assert outcome.computed == 8 and outcome.reused == 0
    parallel, outcome2, _ = run_compare(config, Execution(workers=2, cache=False))
    assert outcome2.backend == "processes:2"
    assert parallel == serial
    again, outcome3, _ = run_compare(config, Execution(cache=True))  # resume: all reused
    assert outcome3.reused == 8 and again == serial
    row = serial["per_nfe"][0]
    assert set(row) >= {"baseline", "at", "replay", "noise", "versus_baseline", "significant"}
    assert set(row["versus_baseline"]) == {"at", "replay", "noise"}
    assert serial["training"]["replay"]["delta_norm"]["mean"] == 0.0
    assert serial["training"]["noise"]["delta_norm"]["mean"] > 0


def test_the_shared_prefix_is_plain_training(config, small_config, same_params):
    # every variant continues from the plain prefix: the baseline of a fine-tuning
    # comparison is exactly a plain run of the whole budget
    from iclr25.core.diffusion_at.compare import _train_variant
    from iclr25.core.diffusion_at.data import load_dataset
    from iclr25.core.diffusion_at.pipeline import train

    toy = load_dataset("8gaussians")
    base = dataclasses.replace(config.base, seed=7)
    via_prefix = _train_variant(base, toy, "cpu")
    plain = train(dataclasses.replace(base, at_start=0), toy)
    same_params(via_prefix.state.model, plain.state.model)
