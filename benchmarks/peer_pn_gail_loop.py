"""PEER, for ``bench_pn_gail.py`` only (not part of iclr25): the official scripts' plain loop.

A clean-room port of the *pattern* of the official PN-GAIL training scripts, written from
the paper notes (``shared/papers/pn-gail.md``: the official code has no licence and is
not copied). It is the peer of ``gail_speedup_vs_official_loop``:

1. **rollout**: one gymnasium ``Pendulum-v1``, stepped one state at a time; each step
   calls the float64 Gaussian policy on that state (mean MLP with an output layer
   scaled ×0.1, state-independent log σ starting at 0), samples the action, and takes
   its reward from the float64 discriminator, r̃ = −log σ(f(s, a)), inside the loop;
   an episode's end is terminal (mask 0), as in the official scripts;
2. GAE(γ, λ) by a backward loop over the batch, advantages standardised;
3. the discriminator (2×100 tanh, Adam) steps on the whole batch (label 1) and as many
   demonstration pairs drawn with replacement (label 0), GAIL's loss;
4. a hand-written TRPO step: conjugate gradient on Fisher-vector products (damping 0.1),
   step scaled to the KL bound, backtracking line search (halving, 10 tries, accepted
   when the improvement is > 0 and > 0.1 × the expected one); the value MLP fitted with
   Adam on minibatches;
5. evaluation: 5 episodes with the mean action after every iteration.

Settings equal to ours where the pattern allows (:meth:`LoopConfig.like`): env steps per
iteration, γ, λ, max KL, CG steps, hidden sizes, critic epochs / batch / learning rate,
discriminator steps and learning rate. Not equal: one env instead of 16, a plain Gaussian
(no gSDE), whole-episode terminal masks (no time-limit bootstrap), raw discriminator
inputs (ours are scaled by the spaces' bounds), float64 instead of float32.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class LoopConfig:
    batch_steps: int = 2048  # env steps per iteration (the official: >= 5,000)
    gamma: float = 0.9
    gae_lambda: float = 0.95
    max_kl: float = 0.01
    damping: float = 0.1  # the official scripts' Fisher damping
    cg_steps: int = 15
    backtracks: int = 10  # line search: step × 0.5^k, k < 10
    accept_ratio: float = 0.1  # improvement / expected improvement to accept
    critic_epochs: int = 20
    critic_batch: int = 512
    critic_lr: float = 1e-3
    hidden: int = 64  # policy and value MLPs, 2 tanh layers
    disc_hidden: int = 100
    disc_lr: float = 1e-3
    disc_steps: int = 5
    eval_episodes: int = 5  # mean-action episodes after every iteration

    @classmethod
    def like(cls, config) -> LoopConfig:
        """The loop's settings from our :class:`~iclr25.core.pn_gail.trainer.TrainConfig`."""
        return cls(
            batch_steps=config.rollout_steps,
            gamma=config.gamma,
            gae_lambda=config.gae_lambda,
            max_kl=config.target_kl,
            cg_steps=config.cg_max_steps,
            critic_epochs=config.n_critic_updates,
            critic_batch=config.critic_batch,
            critic_lr=config.learning_rate,
            hidden=config.policy_hidden,
            disc_steps=config.disc_steps,
        )


def mlp(n_in: int, hidden: int, n_out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
        nn.Linear(hidden, n_out),
    )  # fmt: skip


class GaussianPolicy(nn.Module):
    def __init__(self, ds: int, da: int, hidden: int) -> None:
        super().__init__()
        self.mean = mlp(ds, hidden, da)
        with torch.no_grad():
            self.mean[-1].weight.mul_(0.1)
            self.mean[-1].bias.zero_()
        self.log_std = nn.Parameter(torch.zeros(da))

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mean = self.mean(obs)
        return mean, self.log_std.expand_as(mean)

    def log_prob(self, obs: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
        mean, log_std = self(obs)
        z = (act - mean) / log_std.exp()
        return (-0.5 * z**2 - log_std - 0.5 * np.log(2 * np.pi)).sum(-1)  # (B,)


@dataclass
class Batch:
    obs: np.ndarray  # (T, ds) float64
    act: np.ndarray  # (T, da)
    reward: np.ndarray  # (T,) discriminator rewards
    mask: np.ndarray  # (T,) 0 at an episode's end


class OfficialLoop:
    """One training run of the plain loop (GAIL's loss) on gymnasium's Pendulum-v1."""

    def __init__(self, demo_pairs: np.ndarray, config: LoopConfig, seed: int) -> None:
        import gymnasium as gym

        torch.manual_seed(seed)
        self.config = config
        self.env, self.eval_env = gym.make("Pendulum-v1"), gym.make("Pendulum-v1")
        self.eval_env.reset(seed=seed + 1)
        self.ds = self.env.observation_space.shape[0]
        self.da = self.env.action_space.shape[0]
        self.policy = GaussianPolicy(self.ds, self.da, config.hidden).double()
        self.value = mlp(self.ds, config.hidden, 1).double()
        self.disc = mlp(self.ds + self.da, config.disc_hidden, 1).double()
        self.value_opt = torch.optim.Adam(self.value.parameters(), lr=config.critic_lr)
        self.disc_opt = torch.optim.Adam(self.disc.parameters(), lr=config.disc_lr)
        self.demos = torch.as_tensor(demo_pairs, dtype=torch.float64)
        self.obs = self.env.reset(seed=seed)[0].astype(np.float64)
        self.episode_return = 0.0
        self.training_returns: list[float] = []  # true returns of finished episodes
        self.eval_returns: list[float] = []
        self.env_steps = 0

    def train(self, iterations: int) -> None:
        for _ in range(iterations):
            batch = self.collect()
            advantages, returns = self.gae(batch)
            obs = torch.from_numpy(batch.obs)
            act = torch.from_numpy(batch.act)
            self.discriminator_steps(torch.cat([obs, act], dim=1))
            self.trpo_step(obs, act, torch.from_numpy(advantages))
            self.fit_value(obs, torch.from_numpy(returns))
            self.eval_returns.append(self.evaluate(self.config.eval_episodes))

    # 1. the per-step loop --------------------------------------------------------------
    def collect(self) -> Batch:
        n = self.config.batch_steps
        batch = Batch(
            np.empty((n, self.ds)), np.empty((n, self.da)), np.empty(n), np.empty(n)
        )  # fmt: skip
        for t in range(n):
            state = torch.from_numpy(self.obs).unsqueeze(0)  # (1, ds)
            with torch.no_grad():
                mean, log_std = self.policy(state)
                action = torch.normal(mean, log_std.exp())  # (1, da)
                logit = self.disc(torch.cat([state, action], dim=1))
                reward = -F.logsigmoid(logit).item()
            action_np = action[0].numpy()
            next_obs, true_reward, terminated, truncated, _ = self.env.step(action_np)
            batch.obs[t], batch.act[t], batch.reward[t] = self.obs, action_np, reward
            batch.mask[t] = 0.0 if (terminated or truncated) else 1.0
            self.episode_return += float(true_reward)
            self.obs = next_obs.astype(np.float64)
            if terminated or truncated:
                self.training_returns.append(self.episode_return)
                self.episode_return = 0.0
                self.obs = self.env.reset()[0].astype(np.float64)
        batch.mask[-1] = 0.0  # the batch ends the last trajectory (no bootstrap)
        self.env_steps += n
        return batch

    # 2. GAE --------------------------------------------------------------------------
    def gae(self, batch: Batch) -> tuple[np.ndarray, np.ndarray]:
        gamma, lam = self.config.gamma, self.config.gae_lambda
        with torch.no_grad():
            values = self.value(torch.from_numpy(batch.obs)).squeeze(1).numpy()
        advantages = np.empty_like(values)
        next_value, next_advantage = 0.0, 0.0
        for t in reversed(range(len(values))):
            delta = batch.reward[t] + gamma * next_value * batch.mask[t] - values[t]
            next_advantage = delta + gamma * lam * next_advantage * batch.mask[t]
            advantages[t], next_value = next_advantage, values[t]
        returns = advantages + values
        return (advantages - advantages.mean()) / (advantages.std() + 1e-8), returns

    # 3. discriminator ----------------------------------------------------------------
    def discriminator_steps(self, agent: torch.Tensor) -> None:
        for _ in range(self.config.disc_steps):
            idx = torch.randint(len(self.demos), (len(agent),))
            f_agent, f_demo = self.disc(agent).squeeze(1), self.disc(self.demos[idx]).squeeze(1)
            loss = F.binary_cross_entropy_with_logits(
                f_agent, torch.ones_like(f_agent)
            ) + F.binary_cross_entropy_with_logits(f_demo, torch.zeros_like(f_demo))
            self.disc_opt.zero_grad()
            loss.backward()
            self.disc_opt.step()

    # 4. TRPO and the value fit -------------------------------------------------------
    def trpo_step(self, obs: torch.Tensor, act: torch.Tensor, adv: torch.Tensor) -> None:
        params = list(self.policy.parameters())
        with torch.no_grad():
            old_logp = self.policy.log_prob(obs, act)
            old_mean, old_log_std = self.policy(obs)

        def surrogate() -> torch.Tensor:
            return -(torch.exp(self.policy.log_prob(obs, act) - old_logp) * adv).mean()

        def kl() -> torch.Tensor:  # KL(old ‖ new), mean over the batch
            mean, log_std = self.policy(obs)
            var, old_var = torch.exp(2 * log_std), torch.exp(2 * old_log_std)
            terms = log_std - old_log_std + (old_var + (old_mean - mean) ** 2) / (2 * var) - 0.5
            return terms.sum(1).mean()

        def fisher_product(v: torch.Tensor) -> torch.Tensor:
            grads = flat(torch.autograd.grad(kl(), params, create_graph=True))
            return flat(torch.autograd.grad(grads @ v, params)) + self.config.damping * v

        loss = surrogate()
        g = flat(torch.autograd.grad(loss, params))
        direction = conjugate_gradient(fisher_product, -g, self.config.cg_steps)
        shs = 0.5 * direction @ fisher_product(direction)
        full_step = direction * torch.sqrt(2 * self.config.max_kl / shs)
        expected = -(g @ full_step)
        old = flat([p.detach() for p in params])
        with torch.no_grad():
            f0 = float(loss)
            for k in range(self.config.backtracks):
                fraction = 0.5**k
                set_flat(params, old + fraction * full_step)
                improvement = f0 - float(surrogate())
                if improvement > 0 and improvement / float(expected * fraction) > (
                    self.config.accept_ratio
                ):
                    return
            set_flat(params, old)

    def fit_value(self, obs: torch.Tensor, returns: torch.Tensor) -> None:
        n, size = len(obs), self.config.critic_batch
        for _ in range(self.config.critic_epochs):
            order = torch.randperm(n)
            for start in range(0, n, size):
                idx = order[start : start + size]
                loss = F.mse_loss(self.value(obs[idx]).squeeze(1), returns[idx])
                self.value_opt.zero_grad()
                loss.backward()
                self.value_opt.step()

    # 5. evaluation -------------------------------------------------------------------
    def evaluate(self, episodes: int) -> float:
        """Mean true return of ``episodes`` mean-action episodes (one env, step by step)."""
        total = 0.0
        for _ in range(episodes):
            obs, done = self.eval_env.reset()[0].astype(np.float64), False
            while not done:
                with torch.no_grad():
                    mean, _ = self.policy(torch.from_numpy(obs).unsqueeze(0))
                obs, reward, terminated, truncated, _ = self.eval_env.step(mean[0].numpy())
                obs, total, done = obs.astype(np.float64), total + reward, terminated or truncated
        return total / episodes

    def mean_action(self, obs: np.ndarray) -> np.ndarray:
        """(E, ds) -> (E, da) clipped mean actions (for the fixed-episode evaluation)."""
        with torch.no_grad():
            mean, _ = self.policy(torch.as_tensor(obs, dtype=torch.float64))
        return np.clip(mean.numpy(), -2.0, 2.0)


def flat(tensors) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in tensors])


def set_flat(params: list[torch.Tensor], values: torch.Tensor) -> None:
    start = 0
    for p in params:
        p.copy_(values[start : start + p.numel()].view_as(p))
        start += p.numel()


def conjugate_gradient(product, b: torch.Tensor, steps: int, tol: float = 1e-10) -> torch.Tensor:
    """x ≈ A⁻¹ b for the symmetric positive-definite A given as ``product(v) = A v``."""
    x, r = torch.zeros_like(b), b.clone()
    p, rr = r.clone(), r @ r
    for _ in range(steps):
        ap = product(p)
        alpha = rr / (p @ ap)
        x, r = x + alpha * p, r - alpha * ap
        rr_new = r @ r
        if rr_new < tol:
            break
        p, rr = r + (rr_new / rr) * p, rr_new
    return x
