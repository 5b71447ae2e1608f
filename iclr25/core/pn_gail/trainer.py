"""Adversarial imitation with TRPO (sb3-contrib): GAIL, 2IWIL, IC-GAIL, WGAIL, PN-GAIL.

One iteration (a callback at the end of each TRPO rollout, :class:`_Imitation`):

1. TRPO collects a rollout of E envs × T steps from an environment whose reward is 0; the
   buffer's rewards then hold only SB3's time-limit bootstraps γ·V(s_terminal);
2. the whole rollout is relabelled in one batched forward, r̃ = −log σ(f_ω(s, a)) on the
   clipped actions the environment executed, added to the buffer, and GAE(γ, λ) is
   recomputed (the same numbers a per-step reward wrapper gives: tested);
3. the discriminator takes ``disc_steps`` Adam steps on that rollout (agent, label 1) and
   as many demonstration pairs (label 0) through the method's loss;
4. TRPO updates the policy on the relabelled rollout.

Every ``5 %`` of the budget (whole rollouts) the policy's mean action is evaluated on the
32 fixed episodes (:mod:`.evaluation`). Defaults (a prototype's, checked there): 16 envs ×
128 steps, γ 0.9, λ 0.95, gSDE resampled every 4 steps, target KL 0.01, 20 critic updates
of batch 512 at 1e-3, policy and value 64×64 tanh; discriminator 2×100 tanh, Adam 1e-3,
5 steps. ``PRESETS["paper"]``: the official scripts' settings (100×100 tanh, γ 0.995,
λ 0.97, ≥ 5,000 steps per iteration, one discriminator step, no gSDE, 10 CG steps).

Same seed → same numbers: the policy, the discriminator and the demonstration draws are
seeded from ``seed`` alone, with one torch thread, so every method starts from the same
weights and sees the same environment starts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclr25.core.pn_gail import discriminator as disc_mod
from iclr25.core.pn_gail import evaluation, loss_wgail
from iclr25.core.pn_gail.envs import EnvSpec


@dataclass(frozen=True)
class TrainConfig:
    method: str = "pn-gail"  # gail, 2iwil, ic-gail, wgail, pn-gail
    steps: int = 200_000  # environment steps, rounded up to whole rollouts
    n_envs: int = 16
    n_steps: int = 128  # per env per rollout: 2,048 pairs per iteration
    gamma: float = 0.9
    gae_lambda: float = 0.95
    use_sde: bool = True
    sde_sample_freq: int = 4
    target_kl: float = 0.01
    cg_max_steps: int = 15  # sb3-contrib's default
    n_critic_updates: int = 20
    critic_batch: int = 512
    learning_rate: float = 1e-3  # critic
    policy_hidden: int = 64
    disc_steps: int = 5  # discriminator Adam steps per rollout
    env: str = "pendulum"
    fixed_horizon: bool = False
    expert_return: float | None = None  # R_expert for a gymnasium env (Pendulum: measured)

    @property
    def rollout_steps(self) -> int:
        return self.n_envs * self.n_steps

    @property
    def rollouts(self) -> int:
        return -(-self.steps // self.rollout_steps)


PRESETS = {
    "default": TrainConfig(),
    "paper": TrainConfig(
        n_envs=8,
        n_steps=625,
        gamma=0.995,
        gae_lambda=0.97,
        use_sde=False,
        sde_sample_freq=-1,
        cg_max_steps=10,
        n_critic_updates=30,
        critic_batch=5000 // 30,
        learning_rate=3e-4,
        policy_hidden=100,
        disc_steps=1,
    ),
}


def preset(name: str, **changes) -> TrainConfig:
    return dataclasses.replace(PRESETS[name], **changes)


def build_model(config: TrainConfig, env, seed: int):
    """sb3-contrib TRPO with the config's settings (seeded: equal initial weights)."""
    import torch
    from sb3_contrib import TRPO

    from iclr25.core.pn_gail.sb3_overhead import tensor_rollout_buffer_class

    policy_kwargs = {
        "net_arch": {"pi": [config.policy_hidden] * 2, "vf": [config.policy_hidden] * 2},
        "activation_fn": torch.nn.Tanh,
    }
    return TRPO(
        "MlpPolicy",
        env,
        learning_rate=config.learning_rate,
        n_steps=config.n_steps,
        batch_size=config.critic_batch,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        cg_max_steps=config.cg_max_steps,
        n_critic_updates=config.n_critic_updates,
        use_sde=config.use_sde,
        sde_sample_freq=config.sde_sample_freq,
        target_kl=config.target_kl,
        policy_kwargs=policy_kwargs,
        rollout_buffer_class=tensor_rollout_buffer_class(),  # same samples, fewer copies
        seed=seed,
        device="cpu",
        verbose=0,
    )


def mean_action_policy(model, low: np.ndarray, high: np.ndarray) -> Callable:
    """(E, ds) obs -> (E, da) clipped mean actions of the current policy.

    For a Gaussian or gSDE policy without squashing (TRPO's), the mean action is the
    actor's output ``action_net(latent_pi)``: computed directly, the same numbers as
    ``policy._predict(obs, deterministic=True)`` without building the distribution
    (gSDE's variance is a matrix product per call; an evaluation makes 200 calls)."""
    import torch

    predict = _mean_action_fn(model.policy)

    def act(obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            action = predict(torch.as_tensor(np.asarray(obs, dtype=np.float32))).numpy()
        return np.clip(action, low, high)

    return act


def _mean_action_fn(policy) -> Callable:
    from stable_baselines3.common.distributions import (
        DiagGaussianDistribution,
        StateDependentNoiseDistribution,
    )
    from stable_baselines3.common.policies import BaseModel

    gaussian = (DiagGaussianDistribution, StateDependentNoiseDistribution)
    squashed = policy.squash_output or getattr(policy.action_dist, "bijector", None) is not None
    if squashed or not isinstance(policy.action_dist, gaussian):
        return lambda obs: policy._predict(obs, deterministic=True)

    def mean_action(obs):
        features = BaseModel.extract_features(policy, obs, policy.pi_features_extractor)
        return policy.action_net(policy.mlp_extractor.forward_actor(features))

    from iclr25.core.pn_gail.sb3_overhead import mean_action_fn

    return mean_action_fn(policy) or mean_action


@dataclass
class Evaluator:
    """Evaluates a policy on the fixed episodes and normalises its return."""

    spec: EnvSpec
    expert_return: float | None = None

    def __post_init__(self) -> None:
        from iclr25.core.pn_gail.envs import PENDULUM

        if self.spec.name == PENDULUM:
            self.references = evaluation.pendulum_references()
        else:
            from iclr25.core.pn_gail.envs import gym_random_return

            r_random = gym_random_return(self.spec.name)
            self.references = (
                evaluation.References(self.expert_return, r_random)
                if self.expert_return is not None
                else None
            )
            self.random_return = r_random

    def __call__(self, policy: Callable) -> tuple[float, float | None]:
        from iclr25.core.pn_gail.envs import PENDULUM, gym_return

        if self.spec.name == PENDULUM:
            value = evaluation.evaluate_pendulum(policy)
        else:
            value = gym_return(self.spec.name, policy)
        normalized = self.references.normalize(value) if self.references else None
        return value, normalized


def _callback_class():
    from stable_baselines3.common.callbacks import BaseCallback

    from iclr25.core.pn_gail.sb3_overhead import check_finite

    class _Imitation(BaseCallback):
        """Relabel, recompute GAE, step the discriminator; evaluate on schedule."""

        def __init__(self, state: _State) -> None:
            super().__init__()
            self.state = state

        def _on_step(self) -> bool:
            return True

        def _on_rollout_start(self) -> None:
            self.state.maybe_evaluate(self.model)

        def _on_rollout_end(self) -> None:
            check_finite(self.model.rollout_buffer.actions, self.state.iteration)
            self.state.relabel(self.model.rollout_buffer, self.locals)
            self.state.discriminator_step(self.model)

    return _Imitation


@dataclass
class _State:
    config: TrainConfig
    spec: EnvSpec
    disc: disc_mod.Discriminator
    optimizer: object
    generator: object
    demos: disc_mod.DemoTensors
    evaluate: Evaluator
    on_progress: Callable[[int], None] | None = None
    iteration: int = 0  # finished rollouts
    curve: list = dataclasses.field(default_factory=list)
    disc_loss: float = float("nan")

    def agent_pairs(self, buffer):
        """(T·E, ds + da) pairs of the rollout with the actions the env executed."""
        import torch

        obs = buffer.observations.reshape(-1, self.spec.obs_dim)  # (T, E, ds) -> (T·E, ds)
        act = np.clip(
            buffer.actions.reshape(-1, self.spec.act_dim), self.spec.act_low, self.spec.act_high
        )
        return torch.as_tensor(np.hstack([obs, act]), dtype=torch.float32)

    def relabel(self, buffer, local_vars: dict) -> None:
        x = self.agent_pairs(buffer)
        rewards = self.disc.reward(x).numpy().reshape(buffer.rewards.shape)  # (T, E)
        buffer.rewards += rewards  # on top of the time-limit bootstraps
        buffer.compute_returns_and_advantage(local_vars["values"], local_vars["dones"])
        self._last_pairs = x

    def discriminator_step(self, model) -> None:
        self.iteration += 1
        if self.config.method == "wgail" and loss_wgail.refresh_due(self.iteration):
            self.refresh_wgail(model)
        self.disc_loss = disc_mod.update(
            self.config.method,
            self.disc,
            self.optimizer,
            self._last_pairs,
            self.demos,
            self.generator,
            self.config.disc_steps,
        )
        if self.on_progress is not None:
            self.on_progress(self.config.rollout_steps)

    def refresh_wgail(self, model) -> None:
        import torch

        ds = self.spec.obs_dim
        with torch.no_grad():
            f = self.disc(self.demos.x)
            _, log_pi, _ = model.policy.evaluate_actions(self.demos.x[:, :ds], self.demos.x[:, ds:])
            self.demos.w = loss_wgail.weights(f, log_pi)

    def maybe_evaluate(self, model) -> None:
        due = set(evaluation.curve_steps(self.config.steps, self.config.rollout_steps))
        if self.iteration not in due or (
            self.curve and self.curve[-1]["rollout"] == self.iteration
        ):
            return
        policy = mean_action_policy(model, self.spec.act_low, self.spec.act_high)
        value, normalized = self.evaluate(policy)
        self.curve.append(
            {
                "rollout": self.iteration,
                "env_steps": self.iteration * self.config.rollout_steps,
                "return_mean": value,
                "normalized_return": normalized,
            }
        )


def train(
    config: TrainConfig,
    spec: EnvSpec,
    demos: disc_mod.DemoTensors,
    seed: int,
    on_progress: Callable[[int], None] | None = None,
    save_to=None,
) -> dict:
    """Train ``config.method`` on ``demos``; the curve and the last-quarter figures."""
    import torch

    from iclr25.core.pn_gail.envs import make_training_env, true_returns
    from iclr25.core.pn_gail.sb3_overhead import no_distribution_checks

    torch.set_num_threads(1)
    if config.method not in disc_mod.ADVERSARIAL:
        raise ValueError(f"unknown adversarial method {config.method!r}")
    env = make_training_env(spec, config.n_envs, seed, config.fixed_horizon)
    model = build_model(config, env, seed)
    torch.manual_seed(seed + 1)  # the discriminator's initial weights: equal for all methods
    disc = disc_mod.Discriminator(spec.obs_dim + spec.act_dim, spec.scale)
    state = _State(
        config,
        spec,
        disc,
        torch.optim.Adam(disc.parameters(), lr=disc_mod.LEARNING_RATE),
        torch.Generator().manual_seed(seed + 2),
        demos,
        Evaluator(spec, config.expert_return),
        on_progress,
    )
    with no_distribution_checks():  # checks that only raise: the numbers are unchanged
        model.learn(
            total_timesteps=config.rollouts * config.rollout_steps,
            callback=_callback_class()(state),
        )
    state.maybe_evaluate(model)  # the 100 % point
    if save_to is not None:
        save_to(model)
    return _summary(state, true_returns(env), model.num_timesteps)


def _summary(state: _State, returns: list[float], env_steps: int) -> dict:
    curve = state.curve
    norm = [p["normalized_return"] for p in curve]
    return {
        "method": state.config.method,
        "normalized_return": evaluation.last_quarter_mean(norm) if None not in norm else None,
        "return_mean": evaluation.last_quarter_mean([p["return_mean"] for p in curve]),
        "final_normalized_return": norm[-1],
        "curve": curve,
        "env_steps": int(env_steps),
        "training_episodes": len(returns),
        "training_return_last_100": float(np.mean(returns[-100:])) if returns else None,
        "discriminator_loss_last": state.disc_loss,
    }
