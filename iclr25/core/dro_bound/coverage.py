"""The coverage experiment: how often does the robust empirical risk bound the true risk?

For a known distribution (:mod:`synthetic`), every dimension d and sample size n of the
grids and every trial t, one independent task (:func:`coverage_trial`, run through
:func:`iclr25.parallel.run_tasks` with the seed ``derive_seed(seed, d, n, t)``) draws a
training sample of n rows and, for each radius kind (:mod:`certificate`), applies the
procedure a user would:

- ``calibrated``: split the n rows (``calibration_split`` held out), estimate c by the
  bootstrap on the held-out rows only, fit the robust model on the other rows at
  ρ = c·√(log(1/δ)/n_cert) and certify it there;
- ``user``: ρ = c·√(log(1/δ)/n) with the given c, robust fit on all n rows;
- ``theory`` (bounded distributions, q = 1, κ = ∞, p = 2, Lipschitz loss): the ERM model
  on all n rows, each θ at its own radius ρ_theory(θ) (:mod:`theory`);
- ``empirical`` — the control: ρ = 0, the ERM model's empirical risk.

Each kind records whether R_ρ(θ̂; P_n) ≥ E_P ℓ(θ̂) for its fitted θ̂ and whether the bound
holds **uniformly** over a set of parameters — θ̂ and ``thetas`` random θ drawn once per d
(directions uniform on the sphere, ‖w‖₂ log-uniform on [0.3, 3], b uniform on
[−0.5, 0.5]) — with E_P ℓ from a large test sample drawn once per d. With ``epsilon``
(entropic) the certified quantity is R^ε_ρ and its target the smoothed true risk
E_P E_π₀ ℓ (Monte Carlo on the first ``SMOOTH_TEST_ROWS`` test rows); the plain true risk
is recorded for contrast. Aggregation, slopes and the verdict: :mod:`coverage_report`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from iclr25.core.dro_bound.certificate import (
    KINDS,
    CertificateConfig,
    calibrated_radius,
    certificate_radius,
    split_rows,
)
from iclr25.core.dro_bound.closed_forms import linear_robust_risk
from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.entropic import EntropicConfig
from iclr25.core.dro_bound.fit import FitConfig, check_loss_cost, fit_linear
from iclr25.core.dro_bound.losses import get_loss
from iclr25.core.dro_bound.models import LinearModel
from iclr25.core.dro_bound.setup import RobustSpec, losses_fn, risk_fn
from iclr25.core.dro_bound.synthetic import (
    SYNTHETIC,
    is_classification,
    sample_synthetic,
    support_bounds,
)
from iclr25.core.dro_bound.theory import TheoryConfig, theory_radius, unavailable_reason
from iclr25.errors import UsageError
from iclr25.parallel import derive_seed

SMOOTH_TEST_ROWS = 5000  # test rows (× m reference draws) for the smoothed true risk
MAX_TEST_VALUES = 5e7


@dataclass(frozen=True)
class CoverageConfig:
    distribution: str = "gaussian-classes"
    n_grid: tuple[int, ...] = (200, 800, 3200)
    d_grid: tuple[int, ...] = (2, 10)
    trials: int = 20  # M per (d, n): each one an independent task
    delta: float = 0.05
    kinds: tuple[str, ...] = ()  # () -> every kind that applies (see :func:`kinds_for`)
    radius_constant: float | None = None  # c of the user kind
    calibration_split: float = 0.3
    bootstrap: int = 30  # B of the calibrated estimate, per trial
    rounds: int = 1  # its refit rounds
    test_size: int = 50_000  # held-out sample for the true risk (per d)
    thetas: int = 8  # random θ per d for the uniform check
    cost: TransportCost = TransportCost()
    loss: str | None = None  # None: logistic for classes, absolute for regression
    epsilon: float | None = None  # entropic regularisation
    sigma: float | None = None
    samples: int = 32
    seed: int = 0

    def __post_init__(self) -> None:
        if self.distribution not in SYNTHETIC:
            raise UsageError(
                f"unknown distribution {self.distribution!r}", f"use one of: {', '.join(SYNTHETIC)}"
            )
        if not self.n_grid or min(self.n_grid) < 2 or not self.d_grid or min(self.d_grid) < 1:
            raise UsageError(
                f"grids n={self.n_grid}, d={self.d_grid} are invalid",
                "pass sizes n ≥ 2 and dimensions d ≥ 1, e.g. --n-grid 100,400",
            )
        if self.trials < 2:
            raise UsageError(f"--trials {self.trials} is below 2", "pass --trials 20 or more")
        if self.test_size * max(self.d_grid) > MAX_TEST_VALUES:
            raise UsageError(
                f"--test-size {self.test_size} × d = {max(self.d_grid)} is too many values "
                f"(limit {MAX_TEST_VALUES:.0e})",
                "pass a smaller --test-size",
            )
        if self.test_size < 1000:
            raise UsageError(
                f"--test-size {self.test_size} is too small for a true risk",
                "pass --test-size 10000 or more",
            )
        unknown = set(self.kinds) - set(KINDS)
        if unknown:
            raise UsageError(f"unknown radius kind(s) {sorted(unknown)}", f"use {', '.join(KINDS)}")
        if "user" in self.kinds and self.radius_constant is None:
            raise UsageError("the user kind needs a constant", "pass --radius-constant C")
        check_loss_cost(self.loss_obj, self.cost, None)
        for kind in self.active_kinds:
            if kind == "calibrated":
                split_rows(min(self.n_grid), self.calibration_split, 0)  # enough rows?

    @property
    def loss_name(self) -> str:
        if self.loss is not None:
            return self.loss
        return "logistic" if is_classification(self.distribution) else "absolute"

    @property
    def loss_obj(self):
        return get_loss(self.loss_name)

    @property
    def model_kind(self) -> str:
        return "logistic" if is_classification(self.distribution) else "linear"

    @property
    def entropic(self) -> EntropicConfig | None:
        if self.epsilon is None:
            return None
        return EntropicConfig(self.epsilon, self.sigma, self.samples)

    @property
    def theory_reason(self) -> str | None:
        """Why the theory kind does not apply (None: it does)."""
        reason = unavailable_reason(
            self.model_kind, self.loss_obj, self.cost, self.entropic is not None
        )
        if reason is None and support_bounds(self.distribution, 1) is None:
            reason = f"{self.distribution} has an unbounded support (use ball-classes/ball-linear)"
        return reason

    @property
    def active_kinds(self) -> tuple[str, ...]:
        return kinds_for(self)


def kinds_for(config: CoverageConfig) -> tuple[str, ...]:
    """The kinds measured: those asked for, or calibrated + theory (where it applies) +
    user (when a constant is given)."""
    if config.kinds:
        if "theory" in config.kinds and config.theory_reason:
            raise UsageError(f"the theory kind does not apply: {config.theory_reason}", "drop it")
        return tuple(config.kinds)
    kinds = ["calibrated"]
    if config.theory_reason is None:
        kinds.append("theory")
    if config.radius_constant is not None:
        kinds.append("user")
    return tuple(kinds)


@dataclass(frozen=True)
class TrialConfig:
    """One task: trial ``trial`` of cell (d, n) of ``base``."""

    base: CoverageConfig
    d: int
    n: int
    trial: int


def trial_seed(run_seed: int, d: int, n: int, trial: int) -> int:
    return derive_seed(run_seed, "dro-bound coverage", d, n, trial)


# ---------------------------------------------------------------------------------------
# shared per d: the test sample and the random θ set (drawn once, cached per process)
# ---------------------------------------------------------------------------------------
@lru_cache(maxsize=4)
def test_sample(distribution: str, size: int, d: int, seed: int):
    rng = np.random.default_rng(derive_seed(seed, "dro-bound coverage test", d))
    return sample_synthetic(distribution, size, d, rng)


@lru_cache(maxsize=4)
def theta_set(count: int, d: int, seed: int) -> tuple[tuple[np.ndarray, float], ...]:
    rng = np.random.default_rng(derive_seed(seed, "dro-bound coverage thetas", d))
    out = []
    for _ in range(count):
        direction = rng.standard_normal(d)
        direction /= np.linalg.norm(direction)
        norm = math.exp(rng.uniform(math.log(0.3), math.log(3.0)))
        out.append((direction * norm, float(rng.uniform(-0.5, 0.5))))
    return tuple(out)


# ---------------------------------------------------------------------------------------
# one trial
# ---------------------------------------------------------------------------------------
def _robust_spec(base: CoverageConfig, sigma: float | None, seed: int) -> RobustSpec:
    ent = base.entropic
    if ent is not None and sigma is not None:
        ent = replace(ent, sigma=sigma)
    cert = CertificateConfig(base.delta, None, base.bootstrap, base.rounds, base.calibration_split)
    return RobustSpec(rho=None, cost=base.cost, entropic=ent, certificate=cert, seed=seed)


class _Truth:
    """True risks on the test sample (and smoothed ones for the entropic certificate)."""

    def __init__(self, cfg: TrialConfig):
        base = cfg.base
        self.X, self.y = test_sample(base.distribution, base.test_size, cfg.d, base.seed)

    def plain(self, model: LinearModel) -> float:
        return float(np.mean(model.losses(self.X, self.y)))

    def smoothed(self, model: LinearModel, robust: RobustSpec) -> float:
        rows = slice(0, SMOOTH_TEST_ROWS)
        return float(np.mean(losses_fn(robust)(model, self.X[rows], self.y[rows])))


def _certified_value(model, X, y, rho: float, robust: RobustSpec) -> float:
    if robust.entropic is None:
        cost = robust.cost
        a = cost.dual_norm(model.coef)
        return linear_robust_risk(model.loss, model.scalars(X, y), a, cost, rho).value
    return risk_fn(robust)(model, X, y, rho)


def _evaluate(models, X, y, rhos, robust: RobustSpec, truth: _Truth, kind_info: dict) -> dict:
    """Coverage of θ̂ (models[0]) and uniform coverage over all of ``models``."""
    target = truth.smoothed if robust.entropic is not None else (lambda m, r: truth.plain(m))
    covered = []
    for model, rho in zip(models, rhos, strict=True):
        value = _certified_value(model, X, y, rho, robust)
        covered.append(bool(value >= target(model, robust)))
        if model is models[0]:
            true_hat, value_hat = target(model, robust), value
    hat = models[0]
    out = {
        **kind_info,
        "covered": covered[0],
        "uniform": all(covered),
        "thetas_covered": float(np.mean(covered[1:])) if len(covered) > 1 else None,
        "robust_risk": value_hat,
        "target_risk": true_hat,
        "gap": value_hat - true_hat,
        "empirical_risk": float(np.mean(hat.losses(X, y))),
        "certified_rows": int(len(y)),
    }
    if robust.entropic is not None:
        out["plain_true_risk"] = truth.plain(hat)
        out["covers_plain_true_risk"] = bool(value_hat >= out["plain_true_risk"])
    return out


def _theta_models(cfg: TrialConfig, loss) -> list[LinearModel]:
    return [
        LinearModel(cfg.base.model_kind, loss, w, b)
        for w, b in theta_set(cfg.base.thetas, cfg.d, cfg.base.seed)
    ]


def _fit(X, y, cfg: TrialConfig, loss, rho: float, robust: RobustSpec, seed: int):
    ent = robust.entropic if rho > 0 else None
    config = FitConfig(rho, robust.cost, ent, seed=seed)
    return fit_linear(X, y, cfg.base.model_kind, loss, config).model


def _kind_calibrated(cfg: TrialConfig, X, y, loss, truth, seed: int) -> dict:
    base = cfg.base
    cal, cert = split_rows(cfg.n, base.calibration_split, seed)
    n_cert = len(cert)
    sigma = None
    if base.entropic is not None and base.sigma is None:  # fixed before the radius (setup)
        sigma = (1.0 / math.sqrt(n_cert)) ** (1.0 / base.cost.q) / math.sqrt(cfg.d)
    robust = _robust_spec(base, sigma, seed)

    def refit(Xb, yb, rho):
        return [_fit(Xb, yb, cfg, loss, rho, robust, seed)]

    radius = calibrated_radius(
        X[cal], y[cal], n_cert, [], risk_fn(robust), losses_fn(robust), refit,
        robust.certificate, seed,
    )  # fmt: skip
    hat = _fit(X[cert], y[cert], cfg, loss, radius.rho, robust, seed)
    models = [hat, *_theta_models(cfg, loss)]
    info = {"rho": radius.rho, "constant": radius.constant}
    return _evaluate(models, X[cert], y[cert], [radius.rho] * len(models), robust, truth, info)


def _kind_user(cfg: TrialConfig, X, y, loss, truth, seed: int) -> dict:
    base = cfg.base
    rho = certificate_radius(base.radius_constant, cfg.n, base.delta)
    sigma = base.entropic.sigma_for(rho, base.cost, cfg.d) if base.entropic else None
    robust = _robust_spec(base, sigma, seed)
    hat = _fit(X, y, cfg, loss, rho, robust, seed)
    models = [hat, *_theta_models(cfg, loss)]
    info = {"rho": rho, "constant": base.radius_constant}
    return _evaluate(models, X, y, [rho] * len(models), robust, truth, info)


def _kind_theory(cfg: TrialConfig, X, y, loss, truth, seed: int) -> dict:
    base = cfg.base
    support, target_bound = support_bounds(base.distribution, cfg.d)
    theory = TheoryConfig(support, target_bound)
    robust = _robust_spec(base, None, seed)
    hat = _fit(X, y, cfg, loss, 0.0, robust, seed)
    models = [hat, *_theta_models(cfg, loss)]
    rhos = [theory_radius(m.coef, m.intercept, cfg.n, base.delta, loss, theory).rho for m in models]
    finite = [r if math.isfinite(r) else 0.0 for r in rhos]  # w = 0: no certificate (ρ·0)
    info = {"rho": rhos[0], "constant": None}
    return _evaluate(models, X, y, finite, robust, truth, info)


def _control(cfg: TrialConfig, X, y, loss, truth, seed: int) -> dict:
    robust = replace(_robust_spec(cfg.base, None, seed), entropic=None)
    hat = _fit(X, y, cfg, loss, 0.0, robust, seed)
    models = [hat, *_theta_models(cfg, loss)]
    return _evaluate(models, X, y, [0.0] * len(models), robust, truth, {"rho": 0.0})


KIND_RUNNERS = {"calibrated": _kind_calibrated, "user": _kind_user, "theory": _kind_theory}


def coverage_trial(cfg: TrialConfig, seed: int) -> dict:
    """One task: the sample of trial (d, n, t) and every kind's certificate on it."""
    from iclr25.threads import small_problem_threads

    base = cfg.base
    with small_problem_threads():
        X, y = sample_synthetic(base.distribution, cfg.n, cfg.d, np.random.default_rng(seed))
        loss = base.loss_obj
        truth = _Truth(cfg)
        out = {"d": cfg.d, "n": cfg.n, "trial": cfg.trial}
        for kind in base.active_kinds:
            out[kind] = KIND_RUNNERS[kind](cfg, X, y, loss, truth, seed)
        out["empirical"] = _control(cfg, X, y, loss, truth, seed)
    return out


def coverage_tasks(config: CoverageConfig) -> list:
    """Every trial as a :class:`iclr25.parallel.Task`, in (d, n, t) order."""
    from iclr25.parallel import Task

    return [
        Task(coverage_trial, TrialConfig(config, d, n, t), trial_seed(config.seed, d, n, t),
             f"d={d} n={n} trial {t}")
        for d in config.d_grid
        for n in config.n_grid
        for t in range(config.trials)
    ]  # fmt: skip
