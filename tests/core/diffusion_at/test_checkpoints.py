"""Checkpoint round trip, refusals (other configuration, finished run, foreign files)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from iclr25.core.diffusion_at.checkpoints import (
    check_resumable,
    config_differences,
    load_checkpoint,
    load_model,
    save_checkpoint,
)
from iclr25.core.diffusion_at.pipeline import train
from iclr25.errors import InputError, UsageError


@pytest.fixture
def saved(tmp_path, toy, small_config):
    config = small_config(steps=5, at={"method": "free", "alpha": 0.1})
    trained = train(config, toy)
    return save_checkpoint(tmp_path / "c.safetensors", trained.state, config), config, trained


def test_round_trip(saved):
    path, config, trained = saved
    ckpt = load_checkpoint(path)
    assert ckpt.config == config and ckpt.step == 5
    model, loaded = load_model(path)
    assert loaded == config
    for a, b in zip(model.parameters(), trained.state.ema.parameters(), strict=True):
        assert torch.equal(a, b.detach())


def test_other_configuration_is_refused_with_the_differences(saved):
    path, config, _ = saved
    other = dataclasses.replace(
        config, schedule="cosine", steps=10, at=dataclasses.replace(config.at, alpha=0.2)
    )
    diffs = config_differences(load_checkpoint(path).config, other)
    assert diffs == [
        "at.alpha: checkpoint 0.1, now 0.2",
        "schedule: checkpoint 'linear', now 'cosine'",
    ]
    with pytest.raises(InputError, match="another configuration") as err:
        check_resumable(load_checkpoint(path), other)
    assert "at.alpha" in err.value.what and "without --resume" in err.value.fix


def test_budget_is_not_identity_but_a_finished_run_is_refused(saved):
    path, config, _ = saved
    check_resumable(load_checkpoint(path), dataclasses.replace(config, steps=6))
    with pytest.raises(UsageError, match="already at step 5") as err:
        check_resumable(load_checkpoint(path), config)
    assert "--steps above 5" in err.value.fix


def test_foreign_files_are_refused(tmp_path):
    from safetensors.torch import save_file

    save_file({"w": torch.zeros(2)}, str(tmp_path / "other.safetensors"))
    with pytest.raises(InputError, match="not a diffusion-at checkpoint"):
        load_checkpoint(tmp_path / "other.safetensors")
    (tmp_path / "junk.safetensors").write_bytes(b"junk")
    with pytest.raises(InputError, match="not a readable safetensors"):
        load_checkpoint(tmp_path / "junk.safetensors")
    with pytest.raises(InputError, match="no such checkpoint"):
        load_checkpoint(tmp_path / "missing.safetensors")
