"""Small configurations shared by the diffusion-at core tests."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from iclr25.core.diffusion_at.adversarial import ATConfig
from iclr25.core.diffusion_at.data import load_dataset
from iclr25.core.diffusion_at.models import ModelSpec
from iclr25.core.diffusion_at.training import TrainConfig


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Small tensors: one intra-op thread is faster and immune to oversubscribed CPUs."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def toy():
    return load_dataset("8gaussians")


def _small_config(**overrides) -> TrainConfig:
    """A tiny MLP run: fast enough for exact-equality tests."""
    base = TrainConfig(
        model=ModelSpec("mlp", (2,), width=32, depth=2, time_dim=16),
        diffusion_steps=100,
        steps=40,
        batch_size=64,
        lr=2e-3,
        cm_grid=10,
    )
    if "at" in overrides and isinstance(overrides["at"], dict):
        overrides["at"] = ATConfig(**overrides["at"])
    return dataclasses.replace(base, **overrides)


def _params_of(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _assert_same_params(a: torch.nn.Module, b: torch.nn.Module) -> None:
    pa, pb = _params_of(a), _params_of(b)
    assert pa.keys() == pb.keys()
    for key in pa:
        assert torch.equal(pa[key], pb[key]), f"{key} differs"


@pytest.fixture
def small_config():
    """``small_config(**overrides)``: a tiny MLP TrainConfig (``at`` may be a dict)."""
    return _small_config


@pytest.fixture
def same_params():
    """``same_params(model_a, model_b)``: assert bit-for-bit equal weights."""
    return _assert_same_params
