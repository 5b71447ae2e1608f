"""The controls of free AT (replay-only, noise), the paper preset and AT fine-tuning."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from iclr25.core.diffusion_at.adversarial import (
    ATConfig,
    ball_radius,
    delta_norms,
    noise_norm,
    random_delta,
)
from iclr25.core.diffusion_at.checkpoints import (
    check_resumable,
    load_checkpoint,
    restore_state,
    save_checkpoint,
)
from iclr25.core.diffusion_at.pipeline import make_objective, train
from iclr25.core.diffusion_at.presets import FINETUNE_FRACTION, paper_options
from iclr25.core.diffusion_at.training import init_state, run_training
from iclr25.errors import InputError


def _trajectory(config, dataset) -> list[dict[str, torch.Tensor]]:
    """The model's parameters after every optimiser step."""
    objective = make_objective(config, dataset)
    state = init_state(config)
    out = []
    for step in range(1, config.steps + 1):
        run_training(state, objective, dataclasses.replace(config, steps=step))
        out.append({k: v.detach().clone() for k, v in state.model.state_dict().items()})
    return out


def test_replay_with_one_replay_and_zero_radius_is_the_baseline_trajectory(toy, small_config):
    # the test: replay-only with α = 0 and m = 1 equals the baseline step by step
    base = _trajectory(small_config(steps=8), toy)
    at = {"method": "replay", "alpha": 0.0, "free_replays": 1}
    replay = _trajectory(small_config(steps=8, at=at), toy)
    for step, (a, b) in enumerate(zip(base, replay, strict=True), start=1):
        assert all(torch.equal(a[k], b[k]) for k in a), f"step {step} differs"


def test_replay_with_three_replays_is_not_the_baseline(toy, small_config, same_params):
    base = train(small_config(steps=6), toy)
    replay = train(small_config(steps=6, at={"method": "replay", "free_replays": 3}), toy)
    with pytest.raises(AssertionError):
        same_params(base.state.model, replay.state.model)


@pytest.mark.parametrize("norm", ["l2", "linf"])
def test_random_delta_has_exactly_the_requested_norm(norm):
    like = torch.zeros(50, 1, 4, 4)
    delta = random_delta(like, norm, 0.3, torch.Generator().manual_seed(0))
    assert torch.allclose(delta_norms(delta, norm), torch.full((50,), 0.3), atol=1e-6)
    if norm == "linf":  # a vertex of the ℓ∞ ball: every coordinate is ±ρ
        assert torch.allclose(delta.abs(), torch.full_like(delta, 0.3))
    # directions differ between samples and are not the all-ones sign pattern
    flat = delta.reshape(50, -1)
    assert (flat[0] != flat[1]).any()


def test_noise_norm_follows_free_at_steps():
    # default: step = α, one ℓ2 step of α·√d reaches the edge of the ball
    at = ATConfig("noise", alpha=0.05)
    d = 2
    assert noise_norm(at, 0, d) == 0.0
    assert noise_norm(at, 1, d) == pytest.approx(ball_radius("l2", 0.05, d))
    assert noise_norm(at, 2, d) == pytest.approx(ball_radius("l2", 0.05, d))
    # paper preset on 8×8 images: absolute ℓ2 step 0.1 inside a ball of radius 0.1·8
    paper = ATConfig("noise", alpha=0.1, step=0.1 / 8)
    assert [noise_norm(paper, r, 64) for r in range(3)] == pytest.approx([0.0, 0.1, 0.2])


def test_noise_sees_free_ats_minibatches_with_deltas_of_free_ats_norm(toy, small_config):
    runs = {}
    for method in ("free", "noise", "replay"):
        config = small_config(steps=9, at={"method": method, "alpha": 0.05})
        runs[method] = train(config, toy)
    states = {m: r.state for m, r in runs.items()}
    # same data stream: the noise directions come from their own generator
    assert torch.equal(states["free"].gen.get_state(), states["noise"].gen.get_state())
    assert torch.equal(states["free"].gen.get_state(), states["replay"].gen.get_state())
    # the mean ‖δ‖ measured in training. noise: exactly the radius (default step = α, one
    # step reaches the edge); free: at most the radius — δ_2 = Π(δ_1 + step·ĝ) falls inside
    # when the gradient turns by more than 120° (measured 0.0696 against 0.0707 here)
    radius = ball_radius("l2", 0.05, 2)
    assert states["noise"].mean_delta_norm == pytest.approx(radius, rel=1e-6)
    assert 0.95 * radius < states["free"].mean_delta_norm <= radius + 1e-7
    assert states["replay"].mean_delta_norm is None
    a, b = states["noise"].model.inp.weight, states["replay"].model.inp.weight
    assert not torch.equal(a, b)  # the noise does perturb the training


def test_noise_resumes_exactly(toy, small_config, same_params, tmp_path):
    config = small_config(steps=10, at={"method": "noise", "alpha": 0.05})
    full = train(config, toy)
    half = train(dataclasses.replace(config, steps=5), toy)
    path = save_checkpoint(tmp_path / "c.safetensors", half.state, config)
    ckpt = load_checkpoint(path)
    resumed = train(config, toy, state=restore_state(ckpt, config))
    same_params(full.state.model, resumed.state.model)


def test_the_paper_preset_values():
    opts = paper_options(dim=64, steps=2000)
    assert opts["method"] == "free" and opts["free_replays"] == 3 and opts["norm"] == "l2"
    assert opts["alpha"] == 0.1 and opts["target"] == "x0" and opts["schedule"] == "cosine"
    assert opts["step"] * math.sqrt(64) == pytest.approx(0.1)  # absolute ℓ2 step 0.1
    assert opts["at_start"] == round(2000 * (1 - FINETUNE_FRACTION)) == 1500
    resumed = paper_options(dim=2, steps=2000, resume_step=700)
    assert resumed["at_start"] == 700 and "schedule" not in resumed  # the checkpoint's


def test_fine_tuning_a_plain_checkpoint_equals_the_uninterrupted_run(
    toy, small_config, same_params, tmp_path
):
    # the paper's protocol: AT fine-tunes a pretrained baseline. Resuming a plain checkpoint
    # at step 6 with AT from step 6 is exactly the run that starts AT at step 6.
    plain = train(small_config(steps=6), toy)
    path = save_checkpoint(tmp_path / "plain.safetensors", plain.state, small_config(steps=6))
    at = {"method": "free", "alpha": 0.05}
    wanted = small_config(steps=12, at_start=6, at=at)
    ckpt = load_checkpoint(path)
    check_resumable(ckpt, wanted)  # accepted: only the AT settings differ
    resumed = train(wanted, toy, resume=ckpt)
    uninterrupted = train(wanted, toy)
    same_params(uninterrupted.state.model, resumed.state.model)
    # AT starting before the checkpoint's step would not be the same run: refused
    with pytest.raises(InputError, match="at_start: checkpoint 0, now 3"):
        check_resumable(ckpt, small_config(steps=12, at_start=3, at=at))
