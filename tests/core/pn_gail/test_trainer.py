"""The TRPO trainer: batched relabelling = a per-step reward wrapper; PN-GAIL(r ≡ 1) = GAIL."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from iclr25.core.pn_gail import trainer
from iclr25.core.pn_gail.demos import DemoConfig, generate
from iclr25.core.pn_gail.envs import env_spec
from iclr25.core.pn_gail.pipeline import demo_tensors, run_method
from iclr25.testing import assert_close

SMALL = trainer.TrainConfig(n_envs=4, n_steps=64, steps=512, critic_batch=64, n_critic_updates=2)


@pytest.fixture(scope="module")
def demos():
    return generate(DemoConfig(episodes=1), seed=0)


def reference_advantages(rewards, values, episode_starts, last_values, dones, gamma, lam):
    """GAE(γ, λ) step by step, from rewards a per-step wrapper would have given (T, E)."""
    T = len(rewards)
    adv = np.zeros_like(rewards)
    last = np.zeros(rewards.shape[1])
    for t in reversed(range(T)):
        if t == T - 1:
            nonterminal, next_values = 1.0 - dones, last_values
        else:
            nonterminal, next_values = 1.0 - episode_starts[t + 1], values[t + 1]
        delta = rewards[t] + gamma * next_values * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv


def test_batched_relabel_and_gae_equal_a_per_step_wrapper(demos, monkeypatch):
    import torch

    seen = []
    original = trainer._State.relabel

    def spy(self, buffer, local_vars):
        bootstraps = buffer.rewards.copy()  # (T, E): only SB3's time-limit bootstraps
        obs = buffer.observations.copy()  # (T, E, 3)
        actions = np.clip(buffer.actions.copy(), -2.0, 2.0)  # (T, E, 1): what the env ran
        with torch.no_grad():  # one pair at a time, as a reward wrapper would
            per_step = np.array(
                [
                    [
                        float(self.disc.reward(torch.as_tensor(np.r_[o, a][None])).item())
                        for o, a in zip(obs_t, act_t, strict=True)
                    ]
                    for obs_t, act_t in zip(obs, actions, strict=True)
                ],
                dtype=np.float32,
            )
        original(self, buffer, local_vars)
        last_values = local_vars["values"].flatten().numpy()
        expected = reference_advantages(
            bootstraps + per_step,
            buffer.values,
            buffer.episode_starts,
            last_values,
            local_vars["dones"].astype(np.float32),
            self.config.gamma,
            self.config.gae_lambda,
        )
        seen.append(1)
        assert_close(buffer.rewards, bootstraps + per_step, atol=1e-5, what="rewards")
        assert_close(buffer.advantages, expected, atol=1e-4, what="advantages")
        assert_close(buffer.returns, expected + buffer.values, atol=1e-4, what="returns")

    monkeypatch.setattr(trainer._State, "relabel", spy)
    r = np.where(demos.labeled, demos.confidence, 0.5)
    # 256-step rollouts: the third one crosses the 200-step time limit (bootstraps ≠ 0)
    config = dataclasses.replace(SMALL, method="gail", steps=768)
    trainer.train(config, env_spec("pendulum"), demo_tensors(demos, r), seed=3)
    assert len(seen) == 3


def test_pn_gail_with_unit_confidence_reproduces_gail_curve_exactly(demos):
    r = np.ones(len(demos))
    spec = env_spec("pendulum")
    runs = {m: run_method(m, demos, r, spec, SMALL, None, seed=5) for m in ("gail", "pn-gail")}
    gail, pn = runs["gail"]["curve"], runs["pn-gail"]["curve"]
    assert len(gail) >= 2 and gail == pn  # bit for bit, every evaluation
    other = run_method("pn-gail", demos, np.full(len(demos), 0.5), spec, SMALL, None, seed=5)
    assert other["curve"] != gail  # the test can fail: other confidences change the run


@pytest.mark.parametrize("use_sde", [True, False])
def test_evaluation_mean_action_is_the_policys_deterministic_action(use_sde):
    """The evaluation's direct mean action = SB3's ``_predict(deterministic=True)`` (then
    clipped), bit for bit, for the gSDE and the plain Gaussian policy."""
    import torch

    from iclr25.core.pn_gail.envs import make_training_env

    spec = env_spec("pendulum")
    config = dataclasses.replace(SMALL, use_sde=use_sde, sde_sample_freq=4 if use_sde else -1)
    model = trainer.build_model(config, make_training_env(spec, 4, 0, False), seed=3)
    torch.manual_seed(0)
    with torch.no_grad():
        for param in model.policy.parameters():  # away from the near-zero initial actions
            param.add_(torch.randn_like(param))
    obs = np.random.default_rng(0).uniform(-8, 8, (32, 3)).astype(np.float32)
    fast = trainer.mean_action_policy(model, spec.act_low, spec.act_high)(obs)
    with torch.no_grad():
        slow = model.policy._predict(torch.as_tensor(obs), deterministic=True).numpy()
    assert np.array_equal(fast, np.clip(slow, spec.act_low, spec.act_high))
    assert (np.abs(fast) == spec.act_high).any() and (np.abs(fast) < spec.act_high).any()


def test_overhead_removal_leaves_training_bit_identical(demos, monkeypatch):
    """The tensor rollout buffer, the distribution checks off and the direct mean action
    (:mod:`.sb3_overhead`) change no number: the same curve, discriminator loss and final
    policy weights as SB3's own buffer, checks and module calls, with and without gSDE
    (a batch size that leaves a truncated last minibatch included)."""
    import contextlib

    import torch
    from stable_baselines3.common.buffers import RolloutBuffer

    from iclr25.core.pn_gail import sb3_overhead

    spec, r = env_spec("pendulum"), np.random.default_rng(1).uniform(size=len(demos))

    def run(config):
        kept = {}
        out = run_method(
            "pn-gail", demos, r, spec, config, None, seed=2, save_to=lambda m: kept.update(m=m)
        )
        weights = torch.cat([p.detach().flatten() for p in kept["m"].policy.parameters()])
        direct = sb3_overhead.mean_action_fn(kept["m"].policy) is not None
        return out["curve"], out["discriminator_loss_last"], weights, direct

    for config in (SMALL, dataclasses.replace(SMALL, use_sde=False, critic_batch=48)):
        fast = run(config)
        with monkeypatch.context() as patch:
            patch.setattr(sb3_overhead, "tensor_rollout_buffer_class", lambda: RolloutBuffer)
            patch.setattr(sb3_overhead, "no_distribution_checks", contextlib.nullcontext)
            patch.setattr(sb3_overhead, "mean_action_fn", lambda policy: None)
            plain = run(config)
        assert len(fast[0]) >= 2 and fast[0] == plain[0] and fast[1] == plain[1]
        assert torch.equal(fast[2], plain[2])
        assert fast[3] and not plain[3]  # the direct mean action was the one evaluated


def test_distribution_checks_are_restored_and_divergence_still_raises():
    from torch.distributions import Distribution

    from iclr25.core.pn_gail import sb3_overhead

    before = Distribution._validate_args
    with sb3_overhead.no_distribution_checks():
        assert Distribution._validate_args is False
    assert Distribution._validate_args == before
    sb3_overhead.check_finite(np.zeros((4, 2, 1), dtype=np.float32), 0)
    with pytest.raises(FloatingPointError, match="rollout 3"):
        sb3_overhead.check_finite(np.array([[[np.nan]]], dtype=np.float32), 2)
