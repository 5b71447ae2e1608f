"""`noise --pde darcy`: how the error of the coefficient a grows with the noise level.

Measured per method — ``pi_dion`` (retrained on noisy unlabelled data at every level,
:func:`.darcy_model.train_darcy`) and ``tikhonov`` (Gauss–Newton with the discrepancy
principle at the true σ, :mod:`.darcy_tikhonov`): the root nMSE of a,
sqrt(Σ‖â − a‖² / Σ‖a‖²) over the held-out set (the darcy studies' draw,
:data:`.darcy_compare.TEST_SEED`; the same g and the same standard-normal noise draw at
every level, scaled by σ = level × RMS(u at the sensors)), and its log–log slope against
the level, fitted by least squares (:func:`.noise.fit_slope`). A 95% bootstrap interval
resamples the held-out instances, with the same resample at every level and for every
method, so PI-DION's slope minus Tikhonov's gets a paired interval too.

No predicted slope. The linear study's rate 2ν/(2ν+4+d) is the optimal rate for
recovering f from u = 𝓛⁻¹f with 𝓛 of order 2; it does not carry over: here a enters the
forward map nonlinearly, the flux identity a u' = −(x − c) makes a depend on u' (not u''),
and it degenerates at the flux zero c where u' = 0. We know no established rate for this
problem under this prior, and the paper (notes: ../shared/papers/pi-dion.md) states
none, so ``predicted_slope`` is null with ``predicted_slope_reason``, ``rate_reproduced``
is null and nothing is passed or failed. What the study reads instead is the comparison
with the measured reference: a PI-DION − Tikhonov slope difference whose interval lies
below 0 is named a flatter growth (an optimisation floor hides part of the noise: the
linear study's plateau), above 0 a faster growth (the network fits the noise).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from iclr25.core.pi_dion import darcy
from iclr25.core.pi_dion.darcy_compare import TEST_SEED
from iclr25.core.pi_dion.noise import BOOTSTRAP, LEVELS, fit_slope
from iclr25.core.pi_dion.problem import Problem, rel_l2
from iclr25.core.pi_dion.recipe import TrainConfig
from iclr25.errors import UsageError
from iclr25.parallel import Execution, Outcome, Task, derive_seed, run_tasks

COMMAND = "pi-dion noise --pde darcy"
METHODS = ("pi_dion", "tikhonov")
BREAKDOWN = 1.0  # an instance's rel. L² of a above this: worse than â = 0 (a breakdown)
PREDICTED_SLOPE_REASON = (
    "none: the order-2 linear rate 2ν/(2ν+4+d) does not apply to the nonlinear coefficient "
    "problem −(a u')' = 1 (a enters nonlinearly, through u', and is undetermined where u' = "
    "0), and no established rate for it is known to us or stated by the paper"
)


@dataclass(frozen=True)
class DarcyNoiseConfig:
    problem: Problem = field(default_factory=lambda: Problem(pde="darcy"))
    levels: tuple[float, ...] = LEVELS
    methods: tuple[str, ...] = METHODS
    n_train: int = 1000
    n_test: int = 200
    train: TrainConfig = field(default_factory=TrainConfig)


def quick(cfg: DarcyNoiseConfig) -> DarcyNoiseConfig:
    """--quick: 200 unlabelled / 40 held-out instances, 300 Adam steps per level."""
    return replace(cfg, n_train=200, n_test=40, train=TrainConfig(steps=300))


def check(cfg: DarcyNoiseConfig) -> None:
    if "bayes" in cfg.methods:
        raise UsageError("--methods bayes is not built for --pde darcy: the problem is "
                         "nonlinear and E[a | d] has no closed form",
                         "use --methods pi_dion,tikhonov")  # fmt: skip
    unknown = set(cfg.methods) - set(METHODS)
    if unknown or not cfg.methods:
        raise UsageError(f"--methods {','.join(cfg.methods)}", f"use some of {','.join(METHODS)}")
    if len(cfg.levels) < 3 or min(cfg.levels) <= 0:
        raise UsageError("a slope needs ≥ 3 positive noise levels", "e.g. the default six")


@dataclass(frozen=True)
class DarcyLevelTask:
    config: DarcyNoiseConfig
    method: str
    level: float


def run_level(task: DarcyLevelTask, seed: int) -> dict:
    """Per-instance squared errors and squared norms of a for one method at one level."""
    from iclr25.threads import small_problem_threads

    cfg = task.config
    p = replace(cfg.problem, noise=task.level)
    trained = None
    with small_problem_threads():
        test = darcy.generate(p, cfg.n_test, np.random.default_rng(TEST_SEED))
        if task.method == "tikhonov":
            from iclr25.core.pi_dion import darcy_tikhonov

            g, _, _, _, _ = darcy_tikhonov.reconstruct(test.x, test.d, test.noise_std)
        else:
            from iclr25.core.pi_dion import darcy_model, train

            rng = np.random.default_rng(derive_seed(seed, "data"))
            data = darcy.generate(p, cfg.n_train, rng)
            losses: list[float] = []
            model, final = darcy_model.train_darcy(data.d, data.x, cfg.train, seed,
                                                   on_loss=losses.append)  # fmt: skip
            _, g = darcy_model.predict(model, test.d, test.grid)
            trained = train.loss_curve(losses, final)
    a = np.exp(g)
    return {
        "sq_err": ((a - test.a) ** 2).sum(1).tolist(),
        "sq_norm": (test.a**2).sum(1).tolist(),
        "rel_l2_a": float(rel_l2(a, test.a).mean()),
        "train_loss": trained,
    }


def _interval(value: float, boot: np.ndarray) -> dict:
    low, high = np.percentile(boot, [2.5, 97.5])
    return {"slope": float(value), "ci_low": float(low), "ci_high": float(high)}


def summarise(cfg: DarcyNoiseConfig, results: list[dict], seed: int) -> dict:
    n = len(cfg.levels)
    per = {m: results[i * n : (i + 1) * n] for i, m in enumerate(cfg.methods)}
    err = {m: np.array([r["sq_err"] for r in runs]) for m, runs in per.items()}  # (levels, N)
    norm = {m: np.array([r["sq_norm"] for r in runs]) for m, runs in per.items()}
    rel = {m: np.sqrt(err[m] / norm[m]) for m in per}  # per-instance rel. L² of a

    def slope(m: str, rows) -> float:
        return fit_slope(cfg.levels, np.sqrt(err[m][:, rows].sum(1) / norm[m][:, rows].sum(1)))

    def median_slope(m: str, rows) -> float:
        return fit_slope(cfg.levels, np.median(rel[m][:, rows], axis=1))

    rng = np.random.default_rng(derive_seed(seed, "bootstrap"))
    n_test = next(iter(err.values())).shape[1]
    idx = rng.integers(0, n_test, size=(BOOTSTRAP, n_test))  # one resample for all methods
    fitted, diff = _fits(per, slope, idx)
    fitted_med, diff_med = _fits(per, median_slope, idx)
    out = {
        "noise_levels": list(cfg.levels),
        "methods": list(cfg.methods),
        "rel_l2_a": {m: [x["rel_l2_a"] for x in runs] for m, runs in per.items()},
        "root_nmse_a": {m: np.sqrt(err[m].sum(1) / norm[m].sum(1)).tolist() for m in per},
        "median_rel_l2_a": {m: np.median(rel[m], axis=1).tolist() for m in per},
        "breakdowns": {m: (rel[m] > BREAKDOWN).sum(1).tolist() for m in per},
        "breakdown_rule": f"instances with rel. L² of a > {BREAKDOWN:g} (worse than â = 0)",
        "fitted_slope": fitted,
        "fitted_slope_median": fitted_med,
        "predicted_slope": None,
        "predicted_slope_reason": PREDICTED_SLOPE_REASON,
        "rate_reproduced": None,
        "pass_condition": "none: no predicted rate to test (predicted_slope_reason)",
        "slope_pi_dion_minus_tikhonov": diff,
        "slope_pi_dion_minus_tikhonov_median": diff_med,
        "final_train_loss": {
            m: [x["train_loss"]["final"] for x in runs]
            for m, runs in per.items()
            if runs and runs[0]["train_loss"] is not None
        },
    }
    out["verdict"] = verdict(out)
    return out


def _fits(per: dict, slope, idx: np.ndarray) -> tuple[dict, dict | None]:
    """Per-method slope with its bootstrap interval, and PI-DION − Tikhonov (paired)."""
    boot = {m: np.array([slope(m, i) for i in idx]) for m in per}
    fitted = {m: _interval(slope(m, slice(None)), boot[m]) for m in per}
    if not set(METHODS) <= set(per):
        return fitted, None
    value = fitted["pi_dion"]["slope"] - fitted["tikhonov"]["slope"]
    return fitted, _interval(value, boot["pi_dion"] - boot["tikhonov"])


def growth(diff: dict | None) -> str:
    """How PI-DION's growth compares with Tikhonov's, from the paired slope interval."""
    if diff is None:
        return ""
    lo, hi = diff["ci_low"], diff["ci_high"]
    span = f"PI-DION − Tikhonov {diff['slope']:+.3f} [{lo:+.3f}, {hi:+.3f}]"
    if diff["ci_high"] < 0:
        return f"{span}: flatter than Tikhonov — an optimisation floor hides part of the noise"
    if diff["ci_low"] > 0:
        return f"{span}: steeper than Tikhonov — the network fits the noise"
    return f"{span}: no difference resolved"


def _slopes_text(fits: dict) -> str:
    return "; ".join(f"{m} {f['slope']:.3f} [{f['ci_low']:.3f}, {f['ci_high']:.3f}]"
                     for m, f in fits.items())  # fmt: skip


def verdict(out: dict) -> str:
    """No pass/fail. The slopes of the root nMSE and of the median; breakdowns named; the
    growth named from the paired difference — of the median slopes when a method breaks
    down (then the root nMSE measures the breakdown, not a rate)."""
    text = ("darcy: no predicted slope (the order-2 linear rate does not apply to the "
            "nonlinear coefficient problem; none is claimed, nothing is passed or failed). "
            f"Fitted log–log slopes of the root nMSE of a: {_slopes_text(out['fitted_slope'])}; "
            f"of the median rel. L² of a: {_slopes_text(out['fitted_slope_median'])}")  # fmt: skip
    levels = out["noise_levels"]
    broken = {m: [lv for lv, k in zip(levels, ks, strict=True) if k]
              for m, ks in out["breakdowns"].items()}  # fmt: skip
    for m, where in broken.items():
        if where:
            worst = max(out["breakdowns"][m])
            text += (f". {m} breaks down at noise {', '.join(f'{lv:g}' for lv in where)} (up "
                     f"to {worst} instances with rel. L² of a > {BREAKDOWN:g}, worse than "
                     "â = 0)")  # fmt: skip
    any_broken = any(broken.values())
    diff = growth(out["slope_pi_dion_minus_tikhonov_median" if any_broken
                      else "slope_pi_dion_minus_tikhonov"])  # fmt: skip
    if diff:
        med = out["median_rel_l2_a"]
        lo, hi = (med["pi_dion"][i] / med["tikhonov"][i] for i in (0, -1))
        which = "median slopes, as a method breaks down" if any_broken else "root nMSE slopes"
        text += (f". {diff} ({which}). PI-DION's median error of a is {lo:.3g}× Tikhonov's at "
                 f"the lowest level, {hi:.3g}× at the highest")  # fmt: skip
    return text + "."


def run_noise(cfg: DarcyNoiseConfig, seed: int, execution: Execution | None = None,
              on_done=None) -> tuple[dict, Outcome]:  # fmt: skip
    check(cfg)
    own = replace(cfg, levels=(), methods=())  # what a task reads: reusable in other sweeps
    tasks = [Task(run_level, DarcyLevelTask(own, m, lv), derive_seed(seed, m, lv),
                  f"{m} noise {lv}") for m in cfg.methods for lv in cfg.levels]  # fmt: skip
    outcome = run_tasks(tasks, execution, command=COMMAND, on_done=on_done)
    results = summarise(cfg, outcome.results, seed)
    p = cfg.problem
    results["problem"] = {"pde": p.pde, "dim": 1, "nu": p.nu, "ell": p.ell,
                          "n_sensors": len(darcy.sensor_points(p)),
                          "n_train": cfg.n_train, "n_test": cfg.n_test,
                          "steps": cfg.train.steps, "batch": cfg.train.batch,
                          "lbfgs_steps": cfg.train.lbfgs_steps,
                          "noise_std_per_level": {str(lv): darcy.noise_std(replace(p, noise=lv))
                                                  for lv in cfg.levels}}  # fmt: skip
    return results, outcome
