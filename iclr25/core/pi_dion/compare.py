"""The headline study: label-free PI-DION against labels, Tikhonov and the Bayes floor.

Hypothesis (the paper's claim): a PI-DION trained without labels is about as accurate as
a supervised DeepONet trained on many labelled pairs. Measured: the smallest number of
labels N at which the supervised DeepONet (same inverse branch, trunk, optimiser and
steps) matches PI-DION's error on f (``labels_to_match``, log-interpolated on the grid
of N). Pass condition, fixed here before any run: ``labels_to_match`` ≥ 100 (or above
the grid) ⇒ ``effect_reproduced``. Tikhonov twice in 1-D: α by the discrepancy principle
with the true noise level (``tikhonov``) and by GCV without it (``tikhonov_gcv``). Floor:
the exact Bayes posterior mean; a method more than 3 standard errors below its nMSE is a
bug (exit 1). Control where it must fail:
``sensors=subdomain:A,B`` — f outside (A,B) is not determined by the data, and errors
there are reported apart.

Trained networks can be scored instead of trained (``model``, ``baselines``: what
``--quick`` does with the bundled PI-DION and the supervised DeepONets that
``scripts/train_pi_dion.py --baselines`` writes beside it; then ``test_per_seed`` gives
each seed its own held-out draw, so the interval is over test draws only).

Every (seed, method) is an independent task (:func:`run_method`), run through
:mod:`iclr25.parallel`; the seed's training data come from ``data_seed`` so all methods
of a seed see the same data. The test set is one held-out draw (seed ``test_seed``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from iclr25.core.pi_dion import bayes, bayes2d, problem, saved, tikhonov, train
from iclr25.core.pi_dion.measurements import hull, identifiable_fraction
from iclr25.core.pi_dion.problem import Problem
from iclr25.errors import RunFailure
from iclr25.parallel import Execution, Outcome, Task, derive_seed, run_tasks

COMMAND = "pi-dion compare"
PASS_LABELS = 100  # effect reproduced when the supervised model needs ≥ this many labels
FLOOR_SE = 3.0  # a method this many standard errors below the Bayes nMSE is a bug
TEST_SEED = 20250101


@dataclass(frozen=True)
class CompareConfig:
    problem: Problem = field(default_factory=Problem)
    n_train: int = 1000
    n_test: int = 500
    seeds: int = 5
    labels: tuple[int, ...] = (10, 30, 100, 300, 1000)
    train: train.TrainConfig = field(default_factory=train.TrainConfig)
    # a trained PI-DION (`train --save`, or the bundled one) instead of training one per
    # seed; the supervised models then get its training settings (equal budget)
    model: str | None = None
    model_sha256: str | None = None  # so a cached task never outlives a changed model file
    # trained supervised DeepONets (`scripts/train_pi_dion.py --baselines`: a folder, or
    # "bundled") scored instead of training one per seed; needs ``model`` (equal recipe)
    baselines: str | None = None
    baselines_sha256: tuple[str, ...] = ()  # one per label count, as model_sha256
    # seed i scores on its own held-out draw: with every network loaded (nothing trained),
    # the seeds then vary the test instances (the interval is over test draws only)
    test_per_seed: bool = False
    layout2d: bayes2d.Layout2D = field(default_factory=bayes2d.Layout2D)  # --dim 2 only


# --quick on another problem than the bundled models': small networks trained per seed
QUICK_TRAINED = CompareConfig(
    n_train=200, n_test=100, seeds=3, labels=(10, 100),
    train=train.TrainConfig(steps=300),
)  # fmt: skip
# --quick on the default problem: the bundled PI-DION and the bundled baselines (nothing
# trained), scored on 3 held-out draws of 100 instances
QUICK = CompareConfig(
    n_train=200, n_test=100, seeds=3, labels=saved.BASELINE_LABELS,
    model="bundled", baselines="bundled", test_per_seed=True,
)  # fmt: skip


@dataclass(frozen=True)
class MethodTask:
    config: CompareConfig
    method: str  # "pi_dion", "supervised_N<n>", "tikhonov", "tikhonov_gcv" (1-D), "bayes"
    data_seed: int


def baselines_folder(baselines: str):
    """``bundled`` or a folder → the folder holding ``supervised_rd1d_N<n>.safetensors``."""
    from pathlib import Path

    return saved.BUNDLED.parent if baselines == "bundled" else Path(baselines)


def methods(config: CompareConfig) -> list[str]:
    """The rows; 1-D adds ``tikhonov_gcv`` (α by GCV, no noise level) after ``tikhonov``
    (α by the discrepancy principle with the true σ)."""
    gcv = ["tikhonov_gcv"] if config.problem.dim == 1 else []
    return ["pi_dion", *[f"supervised_N{n}" for n in config.labels], "tikhonov", *gcv, "bayes"]


def _outside_mask(p: Problem, grid: np.ndarray) -> np.ndarray | None:
    """Grid points outside the sensors' hull (where f is not determined), or None."""
    low, high = hull(problem.sensor_points(p))
    outside = (grid < low) | (grid > high)
    return outside if outside.any() else None


def _estimate(task: MethodTask, seed: int, test: problem.Dataset, ops) -> tuple:
    """(u, f, inference seconds, training loss or None) of one method on the test data; the
    training loss (networks trained here only) is :func:`.train.loss_curve`, so a run's
    result shows whether it trained."""
    cfg, p = task.config, task.config.problem
    if task.method == "bayes":
        gains = bayes.state_gain(p, ops), bayes.gain(ops)
        start = time.perf_counter()
        u, f = (bayes.posterior_mean(test.d, g) for g in gains)
        return u, f, time.perf_counter() - start, None
    if task.method == "tikhonov":
        start = time.perf_counter()
        f, u, _ = tikhonov.reconstruct(test.x, p.c, test.d, test.noise_std)  # α search included
        return u, f, time.perf_counter() - start, None
    if task.method == "tikhonov_gcv":  # the noise level is not used: α by GCV
        start = time.perf_counter()
        f, u, _, _ = tikhonov.reconstruct_gcv(test.x, p.c, test.d)  # α search included
        return u, f, time.perf_counter() - start, None
    n = None if task.method == "pi_dion" else int(task.method.removeprefix("supervised_N"))
    losses: list[float] = []
    final = None
    if n is None and cfg.model is not None:
        model = saved.load(saved.resolve(cfg.model, dim=1)).model
    elif n is not None and cfg.baselines is not None:
        model = saved.load(saved.baseline_path(baselines_folder(cfg.baselines), n)).model
    elif n is None:
        data = problem.generate(p, cfg.n_train, np.random.default_rng(task.data_seed), ops)
        model, final = train.train_pi_dion(data.d, data.x, p.c, cfg.train, seed,
                                           on_loss=losses.append)  # fmt: skip
    else:
        data = problem.generate(p, cfg.n_train, np.random.default_rng(task.data_seed), ops)
        model, final = train.train_supervised(data.d[:n], data.f[:n], data.grid, p.c, cfg.train,
                                              seed, on_loss=losses.append)  # fmt: skip
    start = time.perf_counter()
    u, f = train.predict(model, test.d, test.grid)
    supervised = task.method != "pi_dion"  # its reconstruction branch is never trained
    trained = train.loss_curve(losses, final)
    return (None if supervised else u), f, time.perf_counter() - start, trained


def run_method(task: MethodTask, seed: int) -> dict:
    """One method on one seed's data, scored on the held-out test set — with one BLAS and
    one torch thread, so the sums (and the results) are the same on every backend."""
    from iclr25.threads import small_problem_threads

    with small_problem_threads():
        return _run_method(task, seed)


def _run_method_2d(task: MethodTask, seed: int) -> dict:
    from iclr25.core.pi_dion import compare2d

    cfg, p = task.config, task.config.problem
    layout = cfg.layout2d
    ops = compare2d.operators(p, layout)
    test_seed = [TEST_SEED, task.data_seed] if cfg.test_per_seed else TEST_SEED
    test = compare2d.generate(p, layout, ops, cfg.n_test, np.random.default_rng(test_seed))
    u, f, infer_s, trained = compare2d.estimate(task.method, cfg, seed, task.data_seed, test, p,
                                                layout, ops)  # fmt: skip
    result = {
        "rel_l2_f": float(compare2d.rel_l2(f, test.f).mean()),
        "rel_l2_u": None if u is None else float(compare2d.rel_l2(u, test.u).mean()),
        "sq_err_f": ((f - test.f) ** 2).sum(1).tolist(),
        "sq_norm_f": float((test.f**2).sum()),
        "inference_ms_per_instance": 1000 * infer_s / len(test.d),
    }
    if trained is not None:
        result["train_loss"] = trained
    return result


def _run_method(task: MethodTask, seed: int) -> dict:
    p = task.config.problem
    if p.dim == 2:
        return _run_method_2d(task, seed)
    ops = problem.operators(p)
    test_seed = [TEST_SEED, task.data_seed] if task.config.test_per_seed else TEST_SEED
    test = problem.generate(p, task.config.n_test, np.random.default_rng(test_seed), ops)
    u, f, infer_s, trained = _estimate(task, seed, test, ops)
    outside = _outside_mask(p, test.grid)
    result = {
        "rel_l2_f": float(problem.rel_l2(f, test.f).mean()),
        "rel_l2_u": None if u is None else float(problem.rel_l2(u, test.u).mean()),
        "sq_err_f": ((f - test.f) ** 2).sum(1).tolist(),  # (n_test,) for the floor check
        "sq_norm_f": float((test.f**2).sum()),
        "inference_ms_per_instance": 1000 * infer_s / len(test.d),
    }
    if trained is not None:
        result["train_loss"] = trained
    if outside is not None:
        result["rel_l2_f_inside"] = float(
            problem.rel_l2(f[:, ~outside], test.f[:, ~outside]).mean()
        )
        result["rel_l2_f_outside"] = float(problem.rel_l2(f[:, outside], test.f[:, outside]).mean())
    return result


# ---------------------------------------------------------------------------------------
# The study: tasks, then aggregation
# ---------------------------------------------------------------------------------------
def tasks(config: CompareConfig, seed: int) -> list[Task]:
    out = []
    # a task carries only what it reads: with the seed count and label grid left out, its
    # cache key is the same in a run with fewer seeds or another grid (a cut run resumes)
    own = replace(config, seeds=0, labels=())
    for i in range(config.seeds):
        data_seed = derive_seed(seed, "data", i)
        for name in methods(config):
            task = MethodTask(own, name, data_seed)
            out.append(Task(run_method, task, derive_seed(seed, name, i), f"{name} seed {i}"))
    return out


def t_interval(values) -> tuple[float, float, float]:
    """(mean, low, high): the 95% Student-t interval of the mean over seeds."""
    from scipy import stats

    v = np.asarray(values, np.float64)
    mean = float(v.mean())
    if len(v) < 2 or np.all(v == v[0]):
        return mean, mean, mean
    half = float(stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v)))
    return mean, mean - half, mean + half


def _interval(values) -> dict | None:
    if any(v is None for v in values):
        return None  # not estimated by this method
    mean, low, high = t_interval(values)
    return {"mean": mean, "ci_low": low, "ci_high": high}


def labels_to_match(labels, errors, target: float) -> tuple[float | None, str]:
    """Smallest N with supervised error ≤ ``target``, log-interpolated between grid points.

    Returns (N, "matched") inside the grid, (None, "below_grid") when the smallest N
    already matches, (None, "above_grid") when none does.
    """
    if errors[0] <= target:
        return None, "below_grid"
    for i in range(1, len(labels)):
        (n0, e0), (n1, e1) = (labels[i - 1], errors[i - 1]), (labels[i], errors[i])
        if e1 <= target:
            t = (np.log(e0) - np.log(target)) / (np.log(e0) - np.log(e1))
            return float(np.exp(np.log(n0) + t * (np.log(n1) - np.log(n0)))), "matched"
    return None, "above_grid"


def _floor_check(per_method: dict[str, list[dict]]) -> list[str]:
    """Methods whose squared error is > FLOOR_SE standard errors below the Bayes one."""
    bugs = []
    for name, runs in per_method.items():
        for i, (r, b) in enumerate(zip(runs, per_method["bayes"], strict=True)):
            diff = np.asarray(r["sq_err_f"]) - np.asarray(b["sq_err_f"])
            se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else 0.0
            if name != "bayes" and diff.mean() < -FLOOR_SE * se:
                bugs.append(f"{name} (seed {i}): {diff.mean() / max(se, 1e-300):.1f} SE")
    return bugs


def summarise(config: CompareConfig, results: list[dict]) -> dict:
    names = methods(config)
    per_method = {n: [results[i * len(names) + j] for i in range(config.seeds)]
                  for j, n in enumerate(names)}  # fmt: skip
    bugs = _floor_check(per_method)
    if bugs:
        raise RunFailure(
            "a method beat the exact Bayes posterior mean (impossible): " + "; ".join(bugs),
            "this is a bug in the generator or the reference; please report it",
        )
    out = {"methods": names, "seeds": config.seeds}
    for key in ("rel_l2_f", "rel_l2_u", "rel_l2_f_inside", "rel_l2_f_outside"):
        if key in results[0]:
            out[key] = {n: _interval([r[key] for r in runs]) for n, runs in per_method.items()}
    out["nmse_f"] = {n: float(np.mean([sum(r["sq_err_f"]) / r["sq_norm_f"] for r in runs]))
                     for n, runs in per_method.items()}  # fmt: skip
    out["bayes_nmse_f"] = out["nmse_f"]["bayes"]
    out["inference_ms_per_instance"] = {
        n: float(np.median([r["inference_ms_per_instance"] for r in runs]))
        for n, runs in per_method.items()
    }
    # each trained network's loss after training, per seed (absent for loaded networks)
    out["final_train_loss"] = {n: [r["train_loss"]["final"] for r in runs]
                               for n, runs in per_method.items()
                               if all("train_loss" in r for r in runs)}  # fmt: skip
    sup = [out["rel_l2_f"][f"supervised_N{n}"]["mean"] for n in config.labels]
    ours = out["rel_l2_f"]["pi_dion"]["mean"]
    n_match, where = labels_to_match(list(config.labels), sup, ours)
    out["labels_to_match"], out["labels_to_match_where"] = n_match, where
    out["pass_condition"] = f"labels_to_match >= {PASS_LABELS} (or above the label grid)"
    out["effect_reproduced"] = where == "above_grid" or (
        n_match is not None and n_match >= PASS_LABELS
    )
    out["verdict"] = verdict(config, out)
    return out


def match_phrase(labels, where: str, n_match: float | None) -> str:
    """How many labels a supervised DeepONet needs to match PI-DION, in words."""
    if where == "matched":
        return f"a supervised DeepONet matches it with ~{n_match:.0f} labels"
    if where == "below_grid":
        return f"a supervised DeepONet with {labels[0]} labels is already better"
    return f"no supervised DeepONet up to {labels[-1]} labels matches it"


def verdict(config: CompareConfig, out: dict) -> str:
    err = {n: out["rel_l2_f"][n]["mean"] for n in ("pi_dion", "tikhonov", "bayes")}
    match = match_phrase(config.labels, out["labels_to_match_where"], out["labels_to_match"])
    text = (
        f"PI-DION (no labels) f error {err['pi_dion']:.3f} = "
        f"{err['pi_dion'] / err['tikhonov']:.2f}× Tikhonov, {err['pi_dion'] / err['bayes']:.2f}× "
        f"the Bayes floor; {match}. Effect "
        + ("reproduced" if out["effect_reproduced"] else "NOT reproduced")
        + f" (pass: {out['pass_condition']})."
    )
    if config.model is not None and config.baselines is not None:
        text += " PI-DION and each supervised DeepONet are one trained model on every seed" + (
            ": the intervals are over test draws only." if config.test_per_seed else "."
        )
    elif config.model is not None:
        text += " PI-DION is one trained model on every seed (its interval " + (
            "is over test draws only)." if config.test_per_seed else "has width 0)."
        )
    if "rel_l2_f_outside" in out:
        text += (
            " Sensors cover only part of Ω: f outside the sensors' hull is not determined by the "
            "data, no stability estimate holds there (errors reported apart)."
        )
    return text


def headline(results: dict) -> str:
    """One line for the demo and the docs."""
    return results["verdict"]


def run_compare(
    config: CompareConfig, seed: int, execution: Execution | None = None, on_done=None
) -> tuple[dict, Outcome]:
    outcome = run_tasks(tasks(config, seed), execution, command=COMMAND, on_done=on_done)
    results = summarise(config, outcome.results)
    p = config.problem
    x = config.layout2d.sensors() if p.dim == 2 else problem.sensor_points(p)
    results["identifiable_fraction"] = identifiable_fraction(x)
    results["problem"] = {"pde": p.pde, "dim": p.dim, "c": p.c, "noise": p.noise,
                          "sensors": p.sensors, "n_sensors": len(x),
                          "nu": p.nu, "ell": p.ell, "n_train": config.n_train,
                          "n_test": config.n_test, "steps": config.train.steps,
                          "lbfgs_steps": config.train.lbfgs_steps, "batch": config.train.batch,
                          "model": config.model,
                          "model_sha256": config.model_sha256, "baselines": config.baselines,
                          "baselines_sha256": list(config.baselines_sha256),
                          "test_per_seed": config.test_per_seed}  # fmt: skip
    return results, outcome


def quick(config: CompareConfig) -> CompareConfig:
    """The bundled models on the problem they were trained for; small trained ones else."""
    if config.problem == Problem():
        return QUICK
    return replace(QUICK_TRAINED, problem=config.problem)
