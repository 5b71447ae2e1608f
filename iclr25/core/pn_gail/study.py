"""The headline comparison: does PN-GAIL's use of non-optimal pairs pay off?

Hypothesis: on demonstrations dominated by non-optimal behaviour, PN-GAIL reaches a
higher normalised return than GAIL with the same environment steps, *because of* the
confidences; where every pair is optimal it behaves like GAIL.

Per seed i: fresh demonstrations for each setting (seed ``derive_seed(seed, "demos",
setting, i)``) and a fresh labelled subset; one classifier fit; then every method from the
same initial weights and with the same environment steps (training seed ``derive_seed(seed,
"train", i)``). Settings and methods:

- ``dominated`` (80 % of the episodes from ε-random demonstrators): gail, 2iwil, ic-gail,
  pn-gail, ``pn-gail-shuffled`` (control B: the confidences permuted among the pairs, same
  marginal), bc and weighted-bc (no environment steps: reported, never gated);
- ``optimal`` (every episode from the expert): gail and pn-gail (control A).

Pass conditions, fixed here before any run (paired differences over seeds, 95 % t-intervals):

- P1: dominated, PN-GAIL − GAIL: interval above 0;
- P2: dominated, PN-GAIL − shuffled PN-GAIL: interval above 0 (the gain is the confidences');
- P3: optimal, |PN-GAIL − GAIL| < 0.1 and the interval contains 0.

``reproduced`` only when all three hold; PN-GAIL against 2IWIL, IC-GAIL and BC is reported
and not gated. Tasks run through :func:`iclr25.parallel.run_tasks` in two stages (demos +
confidences, then methods): the results do not depend on the backend.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from iclr25.core.pn_gail.bc import BCConfig
from iclr25.core.pn_gail.confidence import ClassifierConfig, quality
from iclr25.core.pn_gail.demos import DemoConfig, generate
from iclr25.core.pn_gail.trainer import TrainConfig

#: imported once by the fork server of ``--workers N`` instead of by every worker: torch's
#: optimisers import ``torch._dynamo`` on first use (about a CPU-second), then SB3
WORKER_PRELOAD = (
    "torch._dynamo",
    "sb3_contrib",
    "iclr25.core.pn_gail.pipeline",
    "iclr25.core.pn_gail.trainer",
)
#: ``compare --quick`` runs its two training runs side by side unless the machine is busy
#: (the results are the same whatever the backend)
QUICK_WORKERS = 2

SETTINGS = {"dominated": 0.2, "optimal": 1.0}  # optimal share of the episodes
SETTING_METHODS = {
    "dominated": ("gail", "2iwil", "ic-gail", "pn-gail", "pn-gail-shuffled", "bc", "weighted-bc"),
    "optimal": ("gail", "pn-gail"),
}
SHUFFLED = "pn-gail-shuffled"
P3_MARGIN = 0.1
CONDITIONS = (
    ("P1", "dominated", "pn-gail", "gail", "interval above 0"),
    ("P2", "dominated", "pn-gail", SHUFFLED, "interval above 0"),
    ("P3", "optimal", "pn-gail", "gail", f"|mean| < {P3_MARGIN} and interval contains 0"),
)
REPORTED = (
    ("dominated", "2iwil"),
    ("dominated", "ic-gail"),
    ("dominated", "bc"),
    ("dominated", "weighted-bc"),
)


@dataclass(frozen=True)
class CompareConfig:
    settings: tuple[str, ...] = ("dominated", "optimal")
    methods: tuple[str, ...] | None = None  # None: every method of each setting
    seeds: int = 5
    train: TrainConfig = TrainConfig()
    classifier: ClassifierConfig = ClassifierConfig()
    bc: BCConfig = BCConfig()
    demo: DemoConfig = DemoConfig()
    quick: bool = False  # one seed, no verdict

    def methods_of(self, setting: str) -> tuple[str, ...]:
        wanted = SETTING_METHODS[setting]
        return tuple(m for m in wanted if self.methods is None or m in self.methods)


@dataclass(frozen=True)
class PrepareTask:
    setting: str
    index: int
    demo: DemoConfig
    classifier: ClassifierConfig
    demo_seed: int


@dataclass(frozen=True)
class MethodTask:
    setting: str
    index: int
    method: str
    demo: DemoConfig
    demo_seed: int
    confidence: tuple[float, ...] = field(repr=False)
    train: TrainConfig = TrainConfig()
    bc: BCConfig = BCConfig()


def _seed32(seed: int) -> int:
    return int(seed) % (2**31 - 1)


def prepare_task(task: PrepareTask, seed: int) -> dict:
    """Stage 1: the seed's demonstrations and their completed confidences."""
    import torch

    from iclr25.core.pn_gail.pipeline import complete_confidences

    torch.set_num_threads(1)
    demos = generate(task.demo, _seed32(task.demo_seed))
    r = complete_confidences(demos, task.classifier, _seed32(seed))
    return {
        "confidence": r.tolist(),
        "quality": quality(r, demos.true_confidence, demos.labeled),
        "pairs": len(demos),
        "labeled": int(demos.labeled.sum()),
    }


def method_task(task: MethodTask, seed: int) -> dict:
    """Stage 2: one method on the seed's demonstrations (the curve is kept, compactly)."""
    from iclr25.core.pn_gail.envs import env_spec
    from iclr25.core.pn_gail.pipeline import run_method

    demos = generate(task.demo, _seed32(task.demo_seed))
    r = np.asarray(task.confidence)
    method = task.method
    if method == SHUFFLED:
        r = np.random.default_rng(_seed32(seed) + 17).permutation(r)  # control B
        method = "pn-gail"
    out = run_method(method, demos, r, env_spec("pendulum"), task.train, task.bc, _seed32(seed))
    keep = ("normalized_return", "return_mean", "final_normalized_return", "env_steps")
    curve = [round(p["normalized_return"], 4) for p in out["curve"]]
    return {**{k: out[k] for k in keep}, "curve": curve}


def paired(a: list[float], b: list[float]) -> dict:
    """Mean, 95 % t-interval and per-seed values of a − b (interval None for one seed)."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    return {"mean": float(d.mean()), "ci95": t_interval(d), "per_seed": d.tolist()}


def t_interval(values: np.ndarray) -> list[float] | None:
    if len(values) < 2:
        return None
    from scipy import stats  # only with ≥ 2 seeds: a one-seed --quick run never loads scipy

    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
    return [float(values.mean() - half), float(values.mean() + half)]


def condition(name: str, diff: dict | None, rule: str) -> dict:
    """Whether a pass condition holds (None when its runs were not part of the study)."""
    if diff is None:
        return {"name": name, "rule": rule, "value": None, "ci95": None, "passed": None}
    ci = diff["ci95"]
    if ci is None:
        passed = None
    elif name == "P3":
        passed = abs(diff["mean"]) < P3_MARGIN and ci[0] <= 0 <= ci[1]
    else:
        passed = ci[0] > 0
    return {"name": name, "rule": rule, "value": diff["mean"], "ci95": ci, "passed": passed}


def summarize(config: CompareConfig, prepared: dict, runs: dict) -> dict:
    """The study's results from the finished tasks (``runs[(setting, method)]`` per seed)."""
    settings = {}
    for setting in config.settings:
        methods = {}
        for method in config.methods_of(setting):
            values = [r["normalized_return"] for r in runs[(setting, method)]]
            arr = np.asarray(values, dtype=np.float64)
            methods[method] = {
                "normalized_return": {
                    "mean": float(arr.mean()),
                    "ci95": t_interval(arr),
                    "per_seed": values,
                },
                "curve_mean": np.mean([r["curve"] for r in runs[(setting, method)]], axis=0)
                .round(4)
                .tolist()
                if runs[(setting, method)][0]["curve"]
                else [],
            }
        conf = [p["quality"] for p in prepared[setting]]
        settings[setting] = {
            "methods": methods,
            "confidence_mae_unlabeled": [q["mae_unlabeled"] for q in conf],
            "confidence_correlation": [q["correlation"] for q in conf],
        }
    differences = _differences(config, runs)
    conditions = [
        condition(name, differences.get(f"{setting}:{a}_vs_{b}"), rule)
        for name, setting, a, b, rule in CONDITIONS
    ]
    return {
        "verdict": verdict(conditions, config.quick),
        "conditions": conditions,
        "settings": settings,
        "differences": differences,
        "env_steps_per_run": config.train.rollouts * config.train.rollout_steps,
        "seeds": config.seeds,
    }


def _differences(config: CompareConfig, runs: dict) -> dict:
    wanted = [(s, a, b) for _, s, a, b, _ in CONDITIONS]
    wanted += [(s, "pn-gail", other) for s, other in REPORTED]
    out = {}
    for setting, a, b in wanted:
        if (setting, a) in runs and (setting, b) in runs:
            va = [r["normalized_return"] for r in runs[(setting, a)]]
            vb = [r["normalized_return"] for r in runs[(setting, b)]]
            out[f"{setting}:{a}_vs_{b}"] = paired(va, vb)
    return out


def verdict(conditions: list[dict], quick: bool) -> str:
    if quick:
        return "no verdict (quick run: one seed)"
    states = [c["passed"] for c in conditions]
    if None in states:
        return "incomplete (a condition's runs were left out)"
    return "reproduced" if all(states) else "not reproduced"


def headline(results: dict) -> str:
    """One line for the demo and the docs: the verdict and the failed conditions' numbers."""
    dom = results["settings"].get("dominated", {}).get("methods", {})
    parts = [
        f"{m} {dom[m]['normalized_return']['mean']:.2f}" for m in ("gail", "pn-gail") if m in dom
    ]
    text = "dominated demos, normalised return: " + ", ".join(parts) if parts else ""
    failed = [c for c in results["conditions"] if c["passed"] is False]
    verdict_text = results["verdict"]
    if failed:
        verdict_text = "NOT reproduced: " + "; ".join(_condition_text(c) for c in failed)
    elif (
        results["verdict"].startswith("no verdict")
        and "dominated:pn-gail_vs_gail" in results["differences"]
    ):
        d = results["differences"]["dominated:pn-gail_vs_gail"]["mean"]
        effect = "ahead" if d > 0 else "NOT ahead (the effect did not appear in this run)"
        verdict_text = f"quick run, one seed: PN-GAIL {effect} by {d:+.2f}"
    return f"{text} — {verdict_text}" if text else verdict_text


def _condition_text(c: dict) -> str:
    ci = c["ci95"]
    interval = f", CI {ci[0]:+.2f}…{ci[1]:+.2f}" if ci else ""
    return f"{c['name']} ({c['value']:+.2f}{interval})"


def free_cores() -> float:
    """Cores this process may use (its CPU affinity) less the 1-minute load average."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return (cores or 1) - load


def default_workers(quick: bool, free: float) -> int:
    """Local processes when ``--workers`` is not given: two for ``--quick`` (GAIL and
    PN-GAIL, one process each) unless the other work on the machine leaves less than half
    a core (``free`` < 0.5), else in-process. Measured on the 2-core machine
    (``scripts/time_pn_gail_quick.py``, medians): with only a niced background job (load
    1.0–1.4) two processes took 25 s against 34 s in-process (the result file as of commit
    a0c1147); at load 2–3, 50 s against 43 s; at load 5–6, 68–81 s against 42–56 s: there
    they fight the other work for the same cores and add a fork server and two pools."""
    return QUICK_WORKERS if quick and free >= 0.5 else 1


def quick_config(config: CompareConfig) -> CompareConfig:
    """--quick: GAIL vs PN-GAIL on dominated demos, one seed, 100k steps, no verdict."""
    return dataclasses.replace(
        config,
        settings=("dominated",),
        methods=("gail", "pn-gail"),
        seeds=1,
        quick=True,
        train=dataclasses.replace(config.train, steps=100_000),
    )


def build_prepare_tasks(config: CompareConfig, seed: int) -> list:
    from iclr25.parallel import Task, derive_seed

    tasks = []
    for setting in config.settings:
        demo = dataclasses.replace(config.demo, optimal_share=SETTINGS[setting])
        for i in range(config.seeds):
            spec = PrepareTask(
                setting, i, demo, config.classifier, derive_seed(seed, "demos", setting, i)
            )
            tasks.append(
                Task(
                    prepare_task,
                    spec,
                    derive_seed(seed, "classifier", setting, i),
                    f"{setting} demos, seed {i}",
                )
            )
    return tasks


def build_method_tasks(config: CompareConfig, seed: int, prepared: dict) -> list:
    from iclr25.parallel import Task, derive_seed

    tasks = []
    for setting in config.settings:
        demo = dataclasses.replace(config.demo, optimal_share=SETTINGS[setting])
        for i in range(config.seeds):
            conf = tuple(prepared[setting][i]["confidence"])
            demo_seed = derive_seed(seed, "demos", setting, i)
            for method in config.methods_of(setting):
                spec = MethodTask(
                    setting, i, method, demo, demo_seed, conf, config.train, config.bc
                )
                tasks.append(
                    Task(
                        method_task,
                        spec,
                        derive_seed(seed, "train", i),
                        f"{setting} {method}, seed {i}",
                    )
                )
    return tasks


#: the game of ``compare --quick``'s fixed-point check (a two-block toy: probabilities of
#: the three actions per block, the blocks' shares and confidences)
QUICK_GAME = ([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]], [1.0, 0.2], [0.2, 0.8])


def fixed_point_task(config: dict, seed: int) -> dict:
    """``compare --quick``'s fixed-point check as a task of the first stage, so that with
    ``--workers 2`` it runs beside the demonstrations and classifier, not after the study."""
    from iclr25.core.pn_gail import fixed_point as fp

    return fp.solve(fp.make_game(*config["game"]), seed=seed)


def run_study(config: CompareConfig, seed: int, execution=None, on_done=None):
    """Both stages through :func:`iclr25.parallel.run_tasks`; (results, [outcomes]). A
    quick run adds the fixed-point check to the first stage (``results["fixed_point"]``)."""
    from iclr25.parallel import Task, run_tasks

    prep_tasks = build_prepare_tasks(config, seed)
    check = Task(fixed_point_task, {"game": QUICK_GAME}, seed, label="fixed point")
    side = [check] if config.quick else []
    prep = run_tasks(side + prep_tasks, execution, command="pn-gail compare:demos", on_done=on_done)
    fixed = prep.results[0] if side else None
    prepared: dict = {s: [] for s in config.settings}
    for task, value in zip(prep_tasks, prep.results[len(side) :], strict=True):
        prepared[task.config.setting].append(value)
    method_tasks = build_method_tasks(config, seed, prepared)
    done = run_tasks(method_tasks, execution, command="pn-gail compare", on_done=on_done)
    runs: dict = {}
    for task, value in zip(method_tasks, done.results, strict=True):
        runs.setdefault((task.config.setting, task.config.method), []).append(value)
    results = summarize(config, prepared, runs)
    if fixed is not None:
        results["fixed_point"] = fixed
    return results, [prep, done]


def task_count(config: CompareConfig) -> int:
    per_seed = sum(1 + len(config.methods_of(s)) for s in config.settings)
    return per_seed * config.seeds + (1 if config.quick else 0)
