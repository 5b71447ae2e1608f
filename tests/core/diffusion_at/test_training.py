"""Training loop: AT methods, α = 0 ≡ baseline, learning, determinism, resume."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from iclr25.core.diffusion_at.checkpoints import load_checkpoint, restore_state, save_checkpoint
from iclr25.core.diffusion_at.ddpm import held_out_loss
from iclr25.core.diffusion_at.pipeline import make_objective, train
from iclr25.core.diffusion_at.training import init_state, run_training
from iclr25.testing import assert_close


@pytest.mark.parametrize("objective", ["ddpm", "ct"])
@pytest.mark.parametrize("method", ["fgsm", "pgd", "free"])
def test_alpha_zero_is_exactly_the_baseline(toy, method, objective, small_config, same_params):
    base = train(small_config(steps=15, objective=objective), toy)
    at = {"method": method, "alpha": 0.0, "step": 0.05}  # even with an explicit ascent step
    zero = train(small_config(steps=15, objective=objective, at=at), toy)
    same_params(base.state.model, zero.state.model)
    same_params(base.state.ema, zero.state.ema)
    assert base.state.losses == zero.state.losses


@pytest.mark.parametrize("method", ["fgsm", "pgd", "free"])
def test_nonzero_alpha_changes_training(toy, method, small_config):
    base = train(small_config(steps=6), toy)
    at = train(small_config(steps=6, at={"method": method, "alpha": 0.1}), toy)
    assert base.state.losses[0] != at.state.losses[0] or method == "free"
    assert not torch.equal(base.state.model.inp.weight, at.state.model.inp.weight)


@pytest.mark.parametrize("method", ["free", "replay"])
def test_free_replays_each_minibatch_and_counts_steps(toy, small_config, method):
    config = small_config(steps=7, at={"method": method, "alpha": 0.1, "free_replays": 3})
    objective = make_objective(config, toy)
    state = init_state(config)
    draws = []
    original = objective.draw
    objective.draw = lambda n, gen: draws.append(n) or original(n, gen)
    run_training(state, objective, config)
    assert state.step == 7 and len(state.losses) == 7
    assert len(draws) == 3  # minibatches at steps 1, 4, 7
    assert state.carry is not None and int(state.carry["replay"]) == 1
    delta_is_zero = bool((state.carry["delta"] == 0).all())
    assert delta_is_zero == (method == "replay")  # after one replay free has moved δ


@pytest.mark.parametrize("objective_name", ["ddpm", "ct"])
def test_free_reuses_the_input_gradient_of_the_training_step(toy, small_config, objective_name):
    # Shafahi et al. 2019, Alg. 1: the backward pass of replay j gives both the weight
    # update and ∂L/∂δ at the weights *before* that update; δ_{j+1} = Π(δ_j + step·dir(g))
    import copy

    from iclr25.core.diffusion_at.adversarial import ascent_step, project
    from iclr25.core.diffusion_at.training import free_step

    config = small_config(objective=objective_name, at={"method": "free", "alpha": 0.1})
    objective = make_objective(config, toy)
    state = init_state(config)
    deltas, grads = [], []
    for _ in range(2):
        before = copy.deepcopy(state.model)
        target = copy.deepcopy(state.target)
        free_step(state, objective, config)
        batch = objective.restore(state.carry)
        delta = (deltas[-1] if deltas else torch.zeros_like(batch.net_input)).requires_grad_()
        objective.loss(before, batch, delta, target).backward()
        grads.append(delta.grad)
        deltas.append(state.carry["delta"])
    assert not torch.equal(grads[0], grads[1])  # the second gradient is at δ_1, new weights
    previous = torch.zeros_like(deltas[0])
    for delta, grad in zip(deltas, grads, strict=True):
        step = ascent_step(previous, grad, "l2", config.at.step_size())
        assert_close(delta, project(step, "l2", 0.1), rtol=1e-5, atol=1e-7)
        previous = delta


def test_replay_is_free_without_the_perturbation(toy, small_config):
    free = train(small_config(steps=6, at={"method": "free", "alpha": 0.1}), toy)
    replay = train(small_config(steps=6, at={"method": "replay"}), toy)
    base = train(small_config(steps=6), toy)
    assert free.state.losses[0] == replay.state.losses[0] == base.state.losses[0]
    assert free.state.losses[1] != replay.state.losses[1]  # δ ≠ 0 from the second replay on
    assert replay.state.losses[1] != base.state.losses[1]  # same batch again vs a new one


def test_at_start_shares_the_plain_prefix(toy, small_config, same_params):
    base = train(small_config(steps=12), toy)
    late = train(small_config(steps=12, at_start=8, at={"method": "free", "alpha": 0.1}), toy)
    assert late.state.losses[:8] == base.state.losses[:8]
    assert late.state.losses[8:] != base.state.losses[8:]
    prefix = train(small_config(steps=8), toy)
    from iclr25.core.diffusion_at.checkpoints import clone_state

    config = small_config(steps=12, at_start=8, at={"method": "free", "alpha": 0.1})
    continued = train(config, toy, state=clone_state(prefix.state, config))
    same_params(continued.state.model, late.state.model)
    assert continued.state.losses == late.state.losses
    assert prefix.state.step == 8  # the clone did not move the original


def test_short_training_lowers_the_held_out_loss(toy, small_config):
    config = small_config(steps=250)
    objective = make_objective(config, toy)
    state = init_state(config)
    before = held_out_loss(state.model, objective)
    run_training(state, objective, config)
    after = held_out_loss(state.model, objective)
    assert after < 0.7 * before, (before, after)


def test_same_seed_same_run_other_seed_other_run(toy, small_config, same_params):
    a = train(small_config(steps=10, seed=3), toy)
    b = train(small_config(steps=10, seed=3), toy)
    c = train(small_config(steps=10, seed=4), toy)
    same_params(a.state.ema, b.state.ema)
    assert not torch.equal(a.state.model.out.weight, c.state.model.out.weight)


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"at": {"method": "free", "alpha": 0.1, "free_replays": 3}},  # stops mid-replay at 10
        {"at": {"method": "pgd", "alpha": 0.1, "pgd_steps": 2}},
        {"objective": "ct", "at": {"method": "free", "alpha": 0.05}},
    ],
)
def test_resume_equals_an_uninterrupted_run(toy, tmp_path, overrides, small_config, same_params):
    config = small_config(steps=20, **overrides)
    full = train(config, toy)
    half = train(dataclasses.replace(config, steps=10), toy)
    path = save_checkpoint(tmp_path / "half.safetensors", half.state, config)
    resumed = train(config, toy, resume=load_checkpoint(path))
    assert resumed.state.step == 20
    same_params(full.state.model, resumed.state.model)
    same_params(full.state.ema, resumed.state.ema)
    assert full.state.losses == resumed.state.losses


def test_restore_state_round_trips_the_optimiser(toy, tmp_path, small_config):
    config = small_config(steps=5)
    trained = train(config, toy)
    state = restore_state(
        load_checkpoint(save_checkpoint(tmp_path / "c.safetensors", trained.state, config)), config
    )
    a = trained.state.optimizer.state_dict()["state"]
    b = state.optimizer.state_dict()["state"]
    for i in a:
        for key in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(torch.as_tensor(a[i][key]), torch.as_tensor(b[i][key]))
    assert torch.equal(trained.state.gen.get_state(), state.gen.get_state())
