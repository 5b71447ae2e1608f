"""Bandit environments: k-armed (Bernoulli / Gaussian), finite linear, and the unit ball.

- :class:`ArmsEnvironment`: a finite set of arms with means ``means`` (k,). Rewards are
  Bernoulli(μ_i) or N(μ_i, σ²). A finite *linear* bandit is the same object with
  ``features`` (k, d) and ``theta`` (d,), means = features @ theta, Gaussian noise.
- :class:`BallEnvironment`: the linear bandit whose action set is the unit ball of R^d;
  the reward of action a is <θ, a> + N(0, σ²).

Regret everywhere is the pseudo-regret: Σ_t (μ* - μ_{a_t}), the expected regret given the
arms played (Lattimore & Szepesvári, *Bandit Algorithms*, eq. 4.1), so executions differ
only through the trace they play.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from iclr25.errors import UsageError

NOISES = ("bernoulli", "gaussian")
INSTANCES = ("random", "equal-gaps", "hard", "stress", "near-tied", "spread", "ladder")
#: named families that push list sizes towards their bounds (see :func:`family_means`)
STRESS_FAMILIES = ("stress", "near-tied", "spread", "ladder")
#: sub-Gaussian variance proxy of a Bernoulli reward (Hoeffding: rewards in [0, 1])
BERNOULLI_SUBGAUSSIAN = 0.5


@dataclass(frozen=True)
class ArmsEnvironment:
    means: np.ndarray  # (k,) μ_i
    noise: str = "bernoulli"
    sigma: float = 1.0  # reward standard deviation for Gaussian noise (ignored for Bernoulli)
    features: np.ndarray | None = None  # (k, d) arm vectors of a finite linear bandit
    theta: np.ndarray | None = None  # (d,) the linear parameter θ
    label: str = "custom"

    @property
    def k(self) -> int:
        return int(self.means.shape[0])

    @property
    def subgaussian(self) -> float:
        """σ in the concentration bounds: 1/2 for Bernoulli rewards, the noise sd otherwise."""
        return BERNOULLI_SUBGAUSSIAN if self.noise == "bernoulli" else float(self.sigma)

    @property
    def gaps(self) -> np.ndarray:
        return self.means.max() - self.means  # (k,) Δ_i

    @property
    def best_arm(self) -> int:
        return int(np.argmax(self.means))

    def draw_sums(self, rng: np.random.Generator, pulls: np.ndarray) -> np.ndarray:
        """Sum of ``pulls[r, i]`` fresh rewards of arm i for each execution r (aggregated)."""
        if self.noise == "bernoulli":
            if pulls.max(initial=0) <= 1:  # one pull at most: a Bernoulli draw is cheaper
                return (rng.random(pulls.shape) < self.means[None, :]) * pulls.astype(np.float64)
            return rng.binomial(pulls, self.means[None, :]).astype(np.float64)
        sd = self.sigma * np.sqrt(pulls)
        return pulls * self.means[None, :] + sd * rng.standard_normal(pulls.shape)

    def draw_rewards(self, rng: np.random.Generator, arms: np.ndarray) -> np.ndarray:
        """One fresh reward per execution for the arm it plays (per-round simulation)."""
        mu = self.means[arms]
        if self.noise == "bernoulli":
            return (rng.random(arms.shape) < mu).astype(np.float64)
        return mu + self.sigma * rng.standard_normal(arms.shape)

    def describe(self) -> dict:
        out = {
            "kind": "linear-finite" if self.features is not None else "k-armed",
            "instance": self.label,
            "k": self.k,
            "noise": self.noise,
            "sigma": self.sigma if self.noise == "gaussian" else None,
            "means": self.means.round(6).tolist(),
            "best_arm": self.best_arm,
            "min_positive_gap": _min_positive(self.gaps),
        }
        if self.features is not None:
            out["dim"] = int(self.features.shape[1])
            out["theta"] = np.asarray(self.theta).round(6).tolist()
        return out


@dataclass(frozen=True)
class BallEnvironment:
    theta: np.ndarray  # (d,) θ; the best action is θ / |θ|
    sigma: float = 1.0
    label: str = "ball"
    means: np.ndarray = field(init=False, repr=False)  # unused; keeps a common attribute set

    def __post_init__(self) -> None:
        object.__setattr__(self, "means", np.empty(0))

    @property
    def dim(self) -> int:
        return int(self.theta.shape[0])

    @property
    def best_value(self) -> float:
        return float(np.linalg.norm(self.theta))

    def describe(self) -> dict:
        return {
            "kind": "linear-ball",
            "dim": self.dim,
            "noise": "gaussian",
            "sigma": self.sigma,
            "theta": self.theta.round(6).tolist(),
            "best_value": self.best_value,
        }


def _min_positive(gaps: np.ndarray) -> float | None:
    positive = gaps[gaps > 1e-12]
    return float(positive.min()) if positive.size else None


# ---------------------------------------------------------------------------------------
# Building instances from options
# ---------------------------------------------------------------------------------------
def parse_means(text: str) -> np.ndarray:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(
            f"--means {text!r} is not a comma-separated list of numbers",
            "write e.g. --means 0.9,0.8,0.5",
        ) from None
    return np.asarray(values, dtype=np.float64)


def check_common(k: int, horizon: int, noise: str, sigma: float) -> None:
    if k < 2:
        raise UsageError(f"k = {k} arms is too few", "a bandit needs at least 2 arms (--k 2)")
    if horizon < k:
        raise UsageError(
            f"--horizon {horizon} is shorter than the number of arms ({k})",
            f"use --horizon {k} or more so every arm can be played once",
        )
    if noise not in NOISES:
        raise UsageError(f"unknown noise {noise!r}", f"use one of: {', '.join(NOISES)}")
    if noise == "gaussian" and not (sigma > 0 and np.isfinite(sigma)):
        raise UsageError(f"--sigma {sigma} is not a positive number", "use e.g. --sigma 1")


def k_armed(
    *,
    k: int,
    horizon: int,
    instance: str = "random",
    gap: float | None = None,
    means: np.ndarray | None = None,
    noise: str = "bernoulli",
    sigma: float = 1.0,
    rng: np.random.Generator | None = None,
) -> ArmsEnvironment:
    """A k-armed instance: explicit ``means``, or generated (random / equal-gaps / hard,
    or one of the stress families of :func:`family_means`).

    - random: μ_i ~ U(0.1, 0.9) (seeded);
    - equal-gaps: μ_i = 0.9 - (i-1)·gap (gap defaults to 0.8/(k-1));
    - hard: k-1 arms at 0.5 and the last arm at 0.5 + gap, gap defaulting to the minimax
      scale √(k/T) (Auer et al. 2002, Thm 5.1) capped at 0.25.
    """
    if means is not None:
        k = int(means.shape[0])
        label = "custom"
    check_common(k, horizon, noise, sigma)
    if means is None:
        means, label = _generated_means(k, horizon, instance, gap, rng), instance
    if not np.all(np.isfinite(means)):
        raise UsageError("--means contains a non-finite value", "give finite numbers")
    if noise == "bernoulli" and (means.min() < 0 or means.max() > 1):
        raise UsageError(
            f"Bernoulli means must lie in [0, 1]; got {means.min():.4g}..{means.max():.4g}",
            "use values in [0, 1] or pass --noise gaussian",
        )
    return ArmsEnvironment(np.asarray(means, np.float64), noise, float(sigma), label=label)


def _generated_means(k, horizon, instance, gap, rng) -> np.ndarray:
    if instance not in INSTANCES:
        raise UsageError(f"unknown instance {instance!r}", f"use one of: {', '.join(INSTANCES)}")
    if gap is not None and not (0 < gap < 1):
        raise UsageError(f"--gap {gap} is outside (0, 1)", "use e.g. --gap 0.1")
    if instance == "random":
        rng = rng if rng is not None else np.random.default_rng(0)
        return rng.uniform(0.1, 0.9, size=k)
    if instance in STRESS_FAMILIES:
        return family_means(
            instance, k, default_scale(instance, k, horizon) if gap is None else gap
        )
    if instance == "equal-gaps":
        gap = 0.8 / (k - 1) if gap is None else gap
        if 0.9 - gap * (k - 1) < 0:
            raise UsageError(
                f"--gap {gap} with k = {k} puts the worst mean below 0",
                f"use --gap {0.9 / (k - 1):.4g} or less",
            )
        return 0.9 - gap * np.arange(k)
    gap = min(0.25, float(np.sqrt(k / horizon))) if gap is None else gap
    if gap > 0.5:
        raise UsageError(f"--gap {gap} is too large for the hard instance", "use --gap ≤ 0.5")
    means = np.full(k, 0.5)
    means[-1] = 0.5 + gap
    return means


def default_scale(family: str, k: int, horizon: int) -> float:
    """The scale g of a stress family when --gap is not given."""
    if family == "near-tied":
        return float(min(0.5, np.sqrt(k / horizon)))  # all arms within the minimax gap
    return 0.5 if family == "stress" else 0.25


def family_means(family: str, k: int, scale: float) -> np.ndarray:
    """Means (k,) of a named stress family with scale g = ``scale`` (0 < g ≤ 0.5):

    - stress: the best arm at 0.5 + g/2, the others at 0.5 - g/2. With g = 2^-p every gap
      sits at the centre of Alg. 1's phase-p zone, so each suboptimal arm is dropped at
      phase p or p+1 like a coin: up to 2^(k-1) traces (g = 1/2: means 0.75 and 0.25);
    - near-tied: means equally spaced over a total spread g around 0.5 (the lower-bound
      argument's neighbourhood of the all-equal instance);
    - spread: the best arm at 0.5 + g, gaps g·2^((i-1)/(k-1)), i = 0..k-2, spread over one
      octave [g, 2g), so randomised thresholds τ(1 + r) meet each arm at a different r;
    - ladder: the best arm at 0.5 + g/2, gaps g·4^-i, i = 0..k-2 (two octaves apart), so
      decisions at different sample sizes (the batches of Alg. 3 and 4) each meet an arm
      near their threshold.
    """
    if not (0 < scale <= 0.5):
        raise UsageError(
            f"--gap {scale} is outside (0, 0.5] for --instance {family}", "use e.g. --gap 0.25"
        )
    if family == "stress":
        means = np.full(k, 0.5 - scale / 2)
        means[0] = 0.5 + scale / 2
        return means
    if family == "near-tied":
        return 0.5 + scale / 2 - scale * np.arange(k) / (k - 1)
    if family == "spread":
        gaps = scale * 2.0 ** (np.arange(k - 1) / (k - 1))
        return np.concatenate([[0.5 + scale], 0.5 + scale - gaps])
    if family == "ladder":
        gaps = scale * 4.0 ** -np.arange(k - 1)
        return np.concatenate([[0.5 + scale / 2], 0.5 + scale / 2 - gaps])
    raise UsageError(
        f"unknown instance family {family!r}", f"use one of: {', '.join(STRESS_FAMILIES)}"
    )


def two_level(k: int, gap: float, noise: str = "bernoulli", sigma: float = 1.0) -> ArmsEnvironment:
    """The minimax-hard family: k-1 arms at 0.5 - gap/2 and the last arm at 0.5 + gap/2."""
    means = np.full(k, 0.5 - gap / 2)
    means[-1] = 0.5 + gap / 2
    return ArmsEnvironment(means, noise, sigma, label=f"two-level gap={gap:.4g}")


def linear_finite(
    *, dim: int, arms: int, horizon: int, theta_norm: float, sigma: float, rng
) -> ArmsEnvironment:
    """``arms`` random unit vectors in R^dim, θ a random direction of norm ``theta_norm``."""
    _check_linear(dim, horizon, theta_norm, sigma)
    if arms < 2:
        raise UsageError(f"--arms {arms} is too few", "use --arms 2 or more, or 0 for the ball")
    if horizon < arms:
        raise UsageError(
            f"--horizon {horizon} is shorter than the number of arms ({arms})",
            f"use --horizon {arms} or more",
        )
    features = _unit_rows(rng.standard_normal((arms, dim)))
    theta = theta_norm * _unit_rows(rng.standard_normal((1, dim)))[0]
    means = features @ theta
    return ArmsEnvironment(means, "gaussian", float(sigma), features, theta, label="linear")


def unit_ball(*, dim: int, horizon: int, theta_norm: float, sigma: float, rng) -> BallEnvironment:
    _check_linear(dim, horizon, theta_norm, sigma)
    theta = theta_norm * _unit_rows(rng.standard_normal((1, dim)))[0]
    return BallEnvironment(theta, float(sigma))


def _check_linear(dim: int, horizon: int, theta_norm: float, sigma: float) -> None:
    if dim < 1:
        raise UsageError(f"--dim {dim} must be at least 1", "use e.g. --dim 5")
    if horizon < 2 * dim:
        raise UsageError(
            f"--horizon {horizon} is too short for dimension {dim}",
            f"use --horizon {2 * dim} or more",
        )
    if not (theta_norm > 0 and np.isfinite(theta_norm)):
        raise UsageError(f"--theta-norm {theta_norm} is not positive", "use e.g. --theta-norm 1")
    if not (sigma > 0 and np.isfinite(sigma)):
        raise UsageError(f"--sigma {sigma} is not a positive number", "use e.g. --sigma 1")


def _unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)
