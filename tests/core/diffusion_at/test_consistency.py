"""Consistency models: the boundary condition, CT/CD target points, AT targets, training."""

from __future__ import annotations

import math

import torch
from torch import nn

from iclr25.core.diffusion_at.consistency import ConsistencyObjective, ConsistencyParam
from iclr25.core.diffusion_at.data import load_dataset
from iclr25.core.diffusion_at.schedules import NoiseSchedule
from iclr25.testing import assert_close


class Net(nn.Module):
    def forward(self, x, t):
        return torch.sin(x) + t.float()[:, None] / 100.0


def test_boundary_condition_holds_exactly():
    # Song et al. eq. 7: c_skip(s_min) = 1, c_out(s_min) = 0, so f(x, t_1) = x/√ᾱ_{t_1}
    s = NoiseSchedule.make("linear", 100)
    param = ConsistencyParam(s, 12)
    x = torch.randn(6, 2)
    t1 = torch.full((6,), int(param.grid[0]))
    assert int(param.grid[0]) == 0 and int(param.grid[-1]) == 99
    assert_close(param.f(Net(), x, t1), x / math.sqrt(s.alpha_bar[0]), rtol=1e-6)
    c_skip, c_out = param.c_skip_out(param.grid)
    assert (c_skip[1:] < 1).all() and (c_out[1:] > 0).all()


def test_ct_target_point_shares_the_noise_and_x0_target_moves_it():
    s = NoiseSchedule.make("linear", 100)
    param = ConsistencyParam(s, 10)
    obj = ConsistencyObjective(param, load_dataset("8gaussians"), at_target="x0")
    batch = obj.draw(16, torch.Generator().manual_seed(0))
    t_now = param.grid[batch.n]
    t_next = param.grid[batch.n + 1]
    assert_close(batch.x_next, s.q_sample(batch.x0, t_next, batch.eps), rtol=1e-5)
    assert_close(obj.target_point(batch, None), s.q_sample(batch.x0, t_now, batch.eps), rtol=1e-5)
    delta = 0.1 * torch.randn_like(batch.x0)
    _, sigma_next = s.coefficients(t_next, 2)
    moved = s.q_sample(batch.x0, t_now, batch.eps + delta / sigma_next)
    assert_close(obj.target_point(batch, delta), moved, rtol=1e-4, atol=1e-5)
    obj.at_target = "eps"
    assert_close(obj.target_point(batch, delta), obj.target_point(batch, None))


def test_cd_target_point_is_a_ddim_step_of_the_teacher():
    s = NoiseSchedule.make("linear", 100)
    param = ConsistencyParam(s, 10)

    class Teacher(nn.Module):
        def forward(self, x, t):
            return 0.5 * x

    obj = ConsistencyObjective(param, load_dataset("8gaussians"), teacher=Teacher())
    batch = obj.draw(8, torch.Generator().manual_seed(1))
    t_now, t_next = param.grid[batch.n], param.grid[batch.n + 1]
    eps = 0.5 * batch.x_next
    x0_hat = s.predict_x0(batch.x_next, t_next, eps)
    assert_close(
        obj.target_point(batch, None), s.q_sample(x0_hat, t_now, eps), rtol=1e-4, atol=1e-5
    )


def test_consistency_training_learns_one_step_samples(toy, small_config):
    # after a short CT run one-step samples are much closer to the data than at initialisation
    from iclr25.core.diffusion_at.evaluation import EvalConfig, Evaluator
    from iclr25.core.diffusion_at.pipeline import sample, train
    from iclr25.core.diffusion_at.samplers import SamplerSpec

    config = small_config(objective="ct", steps=400)
    evaluator = Evaluator(toy, EvalConfig(500, 500, 300))
    untrained = train(small_config(objective="ct", steps=0), toy)
    trained = train(config, toy)
    spec = SamplerSpec("cm", 1)
    before = evaluator(
        sample(untrained.state.ema, spec, untrained.schedule, toy, 500, 0, untrained.param)
    )["sw"]
    after = evaluator(
        sample(trained.state.ema, spec, trained.schedule, toy, 500, 0, trained.param)
    )["sw"]
    assert after < 0.6 * before, (before, after)


def test_distillation_resume_refuses_a_changed_teacher(toy, small_config, tmp_path):
    import dataclasses

    import pytest

    from iclr25.core.diffusion_at.checkpoints import load_checkpoint, save_checkpoint
    from iclr25.core.diffusion_at.pipeline import teacher_settings, train
    from iclr25.errors import InputError

    teacher_cfg = small_config(steps=3)
    teacher = train(teacher_cfg, toy)
    path = save_checkpoint(tmp_path / "teacher.safetensors", teacher.state, teacher_cfg)
    student_cfg = dataclasses.replace(
        small_config(objective="cd", steps=6), **teacher_settings(path, toy)
    )
    half = train(dataclasses.replace(student_cfg, steps=3), toy)
    ckpt = save_checkpoint(tmp_path / "student.safetensors", half.state, student_cfg)
    other = train(small_config(steps=4), toy)  # overwrite the teacher with other weights
    save_checkpoint(path, other.state, teacher_cfg)
    with pytest.raises(InputError, match="not the teacher"):
        train(student_cfg, toy, resume=load_checkpoint(ckpt))


def test_the_target_network_is_an_ema_of_the_online_one(toy, small_config):
    # Song et al. 2023, Alg. 3: θ⁻ ← stopgrad(μ θ⁻ + (1-μ) θ) after every update
    import copy

    from iclr25.core.diffusion_at.pipeline import make_objective
    from iclr25.core.diffusion_at.training import init_state, run_training

    for mu in (0.0, 0.9):
        config = small_config(objective="ct", steps=1, cm_target_ema=mu)
        state = init_state(config)
        start = copy.deepcopy(state.model)
        assert state.target is not None and not any(
            p.requires_grad for p in state.target.parameters()
        )
        run_training(state, make_objective(config, toy), config)
        for p_target, p0, p1 in zip(
            state.target.parameters(), start.parameters(), state.model.parameters(), strict=True
        ):
            assert_close(p_target, mu * p0 + (1 - mu) * p1, rtol=1e-6, atol=1e-7)
    assert init_state(small_config()).target is None  # DDPMs have none


def test_the_loss_regresses_onto_the_target_network(toy):
    s = NoiseSchedule.make("linear", 100)
    obj = ConsistencyObjective(ConsistencyParam(s, 10), toy)
    batch = obj.draw(32, torch.Generator().manual_seed(0))

    class Shift(Net):
        def forward(self, x, t):
            return super().forward(x, t) + 1.0

    online = obj.param.f(Net(), batch.x_next, obj.param.grid[batch.n + 1])
    target = obj.param.f(Shift(), obj.target_point(batch, None), obj.param.grid[batch.n])
    expected = (online - target).square().mean()
    assert_close(obj.loss(Net(), batch, None, Shift()), expected, rtol=1e-6)
    assert float(obj.loss(Net(), batch, None, Net())) < float(expected)
