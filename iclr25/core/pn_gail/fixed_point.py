"""Where each adversarial method drives the policy: closed forms and tabular play.

One state, K discrete actions. Demonstrator j acts with p_j (a row of ``probs``), holds a
share s_j of the pairs and has confidence r_j. Mixture p_d = Σ s_j p_j; positive mass
B = Σ s_j r_j p_j, negative mass N = p_d − B. Fixed points of the policy (derived in the
paper note from the losses; not the paper's theorem):

    GAIL     p_π = p_d                    (imitates the whole mixture)
    2IWIL    p_π = B / ΣB                 (= the optimal demonstrator when r is exact)
    PN-GAIL  p_π = max(0, κB − N),  κ: Σ p_π = 1
             (optimal discriminator D* = (p_π + N)/(p_π + p_d); pushed away from N)

:func:`learned` plays the game through the real loss code (``loss_*.py``): tabular
discriminator logits f (K,) and softmax policy logits θ (K,); each round ``disc_steps``
Adam steps of the method's loss on exact expectations (per-sample weights w = n·p), then
one Adam step of the policy on E_π[−log σ(f)]. The returned distribution is the mean of
the policy over the last ``tail`` share of rounds (the play oscillates around its fixed
point; the average is its estimate).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.errors import UsageError

METHODS = ("gail", "2iwil", "pn-gail")


@dataclass(frozen=True)
class Game:
    probs: np.ndarray  # (J, K) action distribution of each demonstrator
    confidence: np.ndarray  # (J,) r_j
    shares: np.ndarray  # (J,) s_j, summing to 1

    @property
    def p_d(self) -> np.ndarray:
        return self.shares @ self.probs  # (K,)

    @property
    def positive(self) -> np.ndarray:
        return (self.shares * self.confidence) @ self.probs  # B (K,)

    @property
    def negative(self) -> np.ndarray:
        return self.p_d - self.positive  # N (K,)


def make_game(probs, confidence, shares) -> Game:
    """Check the inputs (rows sum to 1, r in [0, 1], shares sum to 1) and build a Game."""
    probs = np.atleast_2d(np.asarray(probs, dtype=np.float64))
    confidence = np.asarray(confidence, dtype=np.float64).reshape(-1)
    shares = np.asarray(shares, dtype=np.float64).reshape(-1)
    j = len(probs)
    if len(confidence) != j or len(shares) != j:
        raise UsageError(
            f"{j} demonstrator rows but {len(confidence)} confidences and {len(shares)} shares",
            "give one --confidence and one --shares value per row of --probs",
        )
    rows = probs.sum(axis=1)
    bad = np.flatnonzero((np.abs(rows - 1) > 1e-6) | (probs < 0).any(axis=1))
    if len(bad):
        raise UsageError(
            f"--probs row {bad[0] + 1} sums to {rows[bad[0]]:.6g} (or has a negative entry)",
            "each row is a distribution over actions: non-negative, summing to 1",
        )
    if ((confidence < 0) | (confidence > 1)).any():
        raise UsageError("--confidence values must lie in [0, 1]", "e.g. --confidence 1,0.2")
    if (shares < 0).any() or abs(shares.sum() - 1) > 1e-6:
        raise UsageError(f"--shares sum to {shares.sum():.6g}", "give shares summing to 1")
    if not (shares * confidence).sum() > 0:
        raise UsageError(
            "no positive mass: every demonstrator has confidence 0",
            "give at least one demonstrator a confidence above 0",
        )
    return Game(probs, confidence, shares)


def closed_form(game: Game, method: str) -> np.ndarray:
    """The policy's fixed point (K,) for ``method``."""
    if method == "gail":
        return game.p_d
    b, n = game.positive, game.negative
    if method == "2iwil":
        return b / b.sum()
    if method == "pn-gail":
        return positive_negative_point(b, n)
    raise ValueError(f"no closed form for {method!r}")


def positive_negative_point(b: np.ndarray, n: np.ndarray) -> np.ndarray:
    """max(0, κB − N) with κ such that it sums to 1 (active set by decreasing B/N)."""
    ratio = np.where(n > 0, b / np.where(n > 0, n, 1), np.inf)
    order = np.argsort(-ratio, kind="stable")
    kappa = np.inf
    for m in range(1, len(b) + 1):
        active = order[:m]
        if b[active].sum() <= 0:
            continue
        kappa = (1 + n[active].sum()) / b[active].sum()
        if m == len(b) or kappa * b[order[m]] <= n[order[m]]:
            break
    return np.maximum(0.0, kappa * b - n)


@dataclass(frozen=True)
class PlayConfig:
    rounds: int = 500
    disc_steps: int = 5  # discriminator Adam steps per policy step (the note's 5)
    disc_lr: float = 0.1
    policy_lr: float = 0.05
    tail: float = 0.25  # average the policy over the last quarter of rounds


def learned(game: Game, method: str, config: PlayConfig = PlayConfig(), seed: int = 0):
    """The policy (K,) reached by alternating gradient play through the loss code."""
    return learned_all(game, (method,), config, seed)[method]


def learned_all(
    game: Game, methods=METHODS, config: PlayConfig = PlayConfig(), seed: int = 0
) -> dict[str, np.ndarray]:
    """:func:`learned` for several methods, played side by side: row m of the logits f and
    θ (M, K) is method m's game. Adam is elementwise and the gradient of the summed losses
    is each method's own, so every row takes exactly the steps it takes alone (tested bit
    for bit); one backward and one Adam step per update serve all the methods."""
    import torch

    torch.manual_seed(seed)
    k, j = game.probs.shape[1], game.probs.shape[0]
    f = torch.zeros(len(methods), k, requires_grad=True)  # (M, K) discriminator logits
    theta = torch.zeros(len(methods), k, requires_grad=True)  # (M, K) policy logits
    opt_f = torch.optim.Adam([f], lr=config.disc_lr)
    opt_pi = torch.optim.Adam([theta], lr=config.policy_lr)
    demos = _demo_samples(game)
    kept, start = [], int(config.rounds * (1 - config.tail))
    for round_ in range(config.rounds):
        pi = torch.softmax(theta, 1).detach()  # (M, K)
        for _ in range(config.disc_steps):
            loss = sum(_loss(m, f[i], k * pi[i], j, demos) for i, m in enumerate(methods))
            opt_f.zero_grad()
            loss.backward()
            opt_f.step()
        reward = _reward(f.detach())  # r̃ = −log σ(f), (M, K)
        objective = -(torch.softmax(theta, 1) * reward).sum()
        opt_pi.zero_grad()
        objective.backward()
        opt_pi.step()
        if round_ >= start:
            kept.append(torch.softmax(theta, 1).detach().double().numpy())
    mean = np.mean(kept, axis=0)  # (M, K)
    return {m: mean[i] for i, m in enumerate(methods)}


def _demo_samples(game: Game) -> tuple:
    """The demonstrations as J·K weighted samples: sample (j, a) has weight J·K·s_j·p_j(a)
    and confidence r_j; and Z = Σ s_j r_j (2IWIL's normaliser)."""
    import torch

    k, j = game.probs.shape[1], game.probs.shape[0]
    demo_w = torch.as_tensor(j * k * game.shares[:, None] * game.probs, dtype=torch.float32)
    demo_r = torch.as_tensor(np.repeat(game.confidence, k), dtype=torch.float32)
    z = float((game.shares * game.confidence).sum())
    return demo_w.reshape(-1), demo_r, z  # (J·K,), (J·K,), Z


def _loss(method: str, f, agent_w, j: int, demos: tuple):
    """The method's discriminator loss on one game's logits f (K,) (policy weights K·π)."""
    from iclr25.core.pn_gail import loss_2iwil, loss_gail, loss_pn_gail

    demo_w, demo_r, z = demos
    f_demo = f.repeat(j)  # (J·K,) logits of the demo samples
    if method == "gail":
        return loss_gail.loss(f, f_demo, agent_w, demo_w)
    if method == "2iwil":
        return loss_2iwil.loss(f, f_demo, demo_r, z, agent_w, demo_w)
    return loss_pn_gail.loss(f, f_demo, demo_r, agent_w, demo_w)


def _reward(f):
    from iclr25.core.pn_gail import loss_gail

    return loss_gail.reward(f)


def optimal_discriminator(game: Game, p_pi: np.ndarray) -> np.ndarray:
    """PN-GAIL's D* = (p_π + N) / (p_π + p_d) for a fixed policy."""
    return (p_pi + game.negative) / (p_pi + game.p_d)


def solve(game: Game, methods=METHODS, config: PlayConfig = PlayConfig(), seed: int = 0) -> dict:
    from iclr25.threads import small_problem_threads

    closed = {m: closed_form(game, m) for m in methods}
    with small_problem_threads():
        play = learned_all(game, tuple(methods), config, seed)
    error = max(float(np.abs(closed[m] - play[m]).max()) for m in methods)
    return {
        "closed_form": {m: v.tolist() for m, v in closed.items()},
        "learned": {m: v.tolist() for m, v in play.items()},
        "max_abs_error": error,
        "p_d": game.p_d.tolist(),
        "positive_mass": game.positive.tolist(),
        "negative_mass": game.negative.tolist(),
    }
