"""The embedded experiment: does Mufu beat plain finetuning on a low-resource target?

Setting (issue 22, the paper's split sizes): for each seed, 787 train / 100 validation /
200 test sentences of the synthetic world (:mod:`world`), never from the target's
pretraining pool; the base model (:mod:`pretrain`, bundled) is the teacher: it writes
the draft ŷ_t into ``tel`` and the candidates ŷ_a into the auxiliary languages. Arms,
all finetuned from the same base at the same budget (:class:`finetune.Budget`):

- ``plain``: P_0(x) (source only) — the paper's finetune-only baseline;
- ``mufu``: P_k(x) with the k = 3 URIEL-analog nearest languages (two sisters and the
  nearest distant relative) and the draft;
- ``shuffled``: as mufu, but each sentence gets another sentence's candidates (a
  derangement: no sentence keeps its own; the draft stays) — equal length, no signal;
- ``unrelated``: as mufu, with k candidates from the unrelated family;
- ``mufu_k<K>`` for each other K of ``--k``; ``teacher``: the draft itself.

Tasks (``iclr25.parallel``): one ``prepare_seed`` per seed (split + teacher outputs),
then one ``train_arm`` per (seed, arm); their seeds come from ``derive_seed`` and every
result is JSON, so the results are identical for any backend. Statistics, conditions
and the verdict: :mod:`experiment_stats`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from iclr25.core.mufu import chrf, experiment_stats, scoring
from iclr25.core.mufu.finetune import Budget, FinetuneConfig, assert_equal_budgets, finetune
from iclr25.core.mufu.generate import generate_causal
from iclr25.core.mufu.models import bundled_path, load
from iclr25.core.mufu.prompts import PromptSpec, render
from iclr25.core.mufu.world import SOURCE, TARGET, UNRELATED, World, WorldConfig
from iclr25.core.mufu.world_tokenizer import display_names
from iclr25.errors import InputError, UsageError
from iclr25.parallel import Execution, Task, derive_seed, run_tasks

BASE_ARMS = ("plain", "mufu", "shuffled", "unrelated")
QUICK_ARMS = ("plain", "mufu", "shuffled")


@dataclass(frozen=True)
class ExperimentConfig:
    seeds: int = 5
    arms: tuple[str, ...] = BASE_ARMS
    k: int = 3  # auxiliary languages of the main mufu arm
    k_grid: tuple[int, ...] = ()  # other k for gain vs k (extra arms mufu_k<K>)
    n_train: int = 787
    n_valid: int = 100
    n_test: int = 200
    finetune: FinetuneConfig = field(
        default_factory=lambda: FinetuneConfig(epochs=6, batch_size=16, lr=1e-3, max_new_tokens=48)
    )
    world_seed: int | None = None  # None: the bundled model's world
    pretrain_steps: int | None = None  # with world_seed: retrain the base (a full rerun)
    n_boot: int = 1000
    seed: int = 0
    gen_batch: int = 128

    def __post_init__(self) -> None:
        if self.seeds < 2:
            raise UsageError(
                f"--seeds {self.seeds}: intervals need at least 2 seeds", "use --seeds 2 or more"
            )
        unknown = [a for a in self.arms if a not in BASE_ARMS]
        if (
            unknown
            or not {"plain", "mufu"} <= set(self.arms)
            or len(set(self.arms)) < len(self.arms)
        ):
            raise UsageError(
                f"--arms {','.join(self.arms)}: arms are {', '.join(BASE_ARMS)}, each once, "
                "plain and mufu always",
                "e.g. --arms plain,mufu (the shuffled control then goes unevaluated)",
            )
        for k in (self.k, *self.k_grid):
            if not 1 <= k <= 5:
                raise UsageError(
                    f"--k {k}: the target has 5 related languages", "use k between 1 and 5"
                )
        if min(self.n_train, self.n_valid, self.n_test) < 2:
            raise UsageError(
                "splits need at least 2 sentences each", "raise --n-train/--n-valid/--n-test"
            )

    def all_arms(self) -> list[str]:
        return list(self.arms) + [f"mufu_k{k}" for k in self.k_grid if k != self.k]


# ---------------------------------------------------------------------------------------
# The base model
# ---------------------------------------------------------------------------------------
def base_model(config: ExperimentConfig, execution: Execution | None = None) -> str:
    """Path of the base model: the bundled one, or one retrained for ``world_seed``."""
    if config.world_seed is None and config.pretrain_steps is None:
        where = bundled_path()
        if not (where / "config.json").exists():
            raise InputError(
                f"the embedded base model is not built in this installation ({where})",
                "build it with `python scripts/train_mufu_model.py`, or let the experiment "
                "train one: --world-seed 0 --pretrain-steps 15000 (about 27 CPU minutes)",
            )
        return str(where)
    task = Task(pretrain_task, _pretrain_config(config), config.world_seed or 0, "pretrain")
    return run_tasks([task], execution, command="mufu experiment pretrain").results[0]


def _pretrain_config(config: ExperimentConfig) -> dict:
    from iclr25.core.mufu.pretrain import PretrainConfig

    base = PretrainConfig(world=WorldConfig(seed=config.world_seed or 0))
    if config.pretrain_steps is not None:
        base = replace(base, steps=config.pretrain_steps)
    return asdict(base)


def pretrain_task(config: dict, seed: int) -> str:
    """Train a base model (``scripts/train_mufu_model.py``'s recipe) into the cache."""
    from iclr25.core.mufu.pretrain import PretrainConfig, pretrain
    from iclr25.paths import cache_dir

    key = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
    out = cache_dir("mufu", f"base-{key}")
    if (out / "model.safetensors").exists():
        return str(out)
    cfg = dict(config)
    cfg["world"] = WorldConfig(**cfg["world"])
    with _one_thread():
        result = pretrain(PretrainConfig(**cfg))
    result.model.save_pretrained(out)
    result.tokenizer.save_pretrained(out)
    (out / "world.json").write_text(json.dumps(asdict(result.world.config)))
    return str(out)


def world_of(model_path: str) -> World:
    path = Path(model_path) / "world.json"
    return World(WorldConfig(**json.loads(path.read_text())))


@contextlib.contextmanager
def _one_thread():
    """Every task trains with one torch thread: identical floats in any process."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# ---------------------------------------------------------------------------------------
# Arms
# ---------------------------------------------------------------------------------------
def arm_spec(arm: str, config: ExperimentConfig, world: World) -> dict:
    """Prompt format, auxiliary languages and whether candidates are deranged."""
    if arm == "plain":
        return {"format": "plain", "aux": [], "shuffle": False}
    if arm == "unrelated":
        return {"format": "mufu", "aux": sorted(UNRELATED)[: config.k], "shuffle": False}
    k = int(arm.removeprefix("mufu_k")) if arm.startswith("mufu_k") else config.k
    return {"format": "mufu", "aux": world.nearest(TARGET, k), "shuffle": arm == "shuffled"}


def derangement(n: int, seed: int) -> list[int]:
    """A random cyclic permutation (Sattolo): no index stays in place (n >= 2)."""
    if n < 2:
        raise UsageError("the shuffled control needs at least 2 sentences", "use more sentences")
    rng = np.random.default_rng(seed)
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(rng.integers(0, i))
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def needed_langs(config: ExperimentConfig, world: World) -> list[str]:
    langs: list[str] = []
    for arm in config.all_arms():
        for lang in arm_spec(arm, config, world)["aux"]:
            if lang not in langs:
                langs.append(lang)
    return langs


# ---------------------------------------------------------------------------------------
# Tasks
# ---------------------------------------------------------------------------------------
def prepare_seed(config: dict, seed: int) -> dict:
    """Split and teacher outputs for one seed: rows {source, target, draft, cand.<a>}."""
    from iclr25.core.mufu.pretrain import target_pool

    model_path, langs = config["model"], config["langs"]
    world = world_of(model_path)
    n_train, n_valid, n_test = config["sizes"]
    pool = target_pool(world, 200)
    sentences = world.sample_many(np.random.default_rng(seed), n_train + n_valid + n_test, pool)
    rows = [
        {"source": world.render(s, SOURCE), "target": world.render(s, TARGET)} for s in sentences
    ]
    refs = {lang: [world.render(s, lang) for s in sentences] for lang in langs}
    with _one_thread():
        loaded = load(model_path, kinds=("causal",))
        names = display_names()
        for lang in [TARGET, *langs]:
            spec = PromptSpec("plain", lang, names=names)
            outputs = generate_causal(
                loaded,
                [render(r, spec) for r in rows],
                max_new_tokens=48,
                batch_size=config["gen_batch"],
            )
            for r, out in zip(rows, outputs, strict=True):
                r["draft" if lang == TARGET else f"cand.{lang}"] = out
    test = slice(n_train + n_valid, None)
    teacher = {
        TARGET: chrf.score(
            chrf.segment_statistics(
                [r["draft"] for r in rows[test]], [r["target"] for r in rows[test]]
            )
        )
    }
    for lang in langs:
        teacher[lang] = chrf.score(
            chrf.segment_statistics([r[f"cand.{lang}"] for r in rows[test]], refs[lang][test])
        )
    return {
        "train": rows[:n_train],
        "valid": rows[n_train : n_train + n_valid],
        "test": rows[test],
        "teacher_chrf": teacher,
    }


def _arm_rows(rows: list[dict], spec: dict, seed: int) -> list[dict]:
    if not spec["shuffle"]:
        return rows
    perm = derangement(len(rows), seed)
    out = []
    for i, row in enumerate(rows):
        donor = rows[perm[i]]
        out.append({**row, **{f"cand.{a}": donor[f"cand.{a}"] for a in spec["aux"]}})
    return out


def train_arm(config: dict, seed: int) -> dict:
    """Finetune one arm on one seed's split; test outputs and their chrF statistics."""
    spec, data = config["spec"], config["data"]
    ft = FinetuneConfig(**{**config["finetune"], "seed": seed})
    prompt = PromptSpec(spec["format"], TARGET, tuple(spec["aux"]), names=display_names())
    splits = {
        name: _arm_rows(data[name], spec, derive_seed(seed, name))
        for name in ("train", "valid", "test")
    }
    prompts = {name: [render(r, prompt) for r in rows] for name, rows in splits.items()}
    with _one_thread():
        loaded = load(config["model"], kinds=("causal",))
        result = finetune(
            loaded,
            prompts["train"],
            [r["target"] for r in splits["train"]],
            prompts["valid"],
            [r["target"] for r in splits["valid"]],
            ft,
        )
        loaded.model = result.model
        outputs = generate_causal(
            loaded,
            prompts["test"],
            max_new_tokens=ft.max_new_tokens,
            batch_size=config["gen_batch"],
        )
    stats = chrf.segment_statistics(outputs, [r["target"] for r in data["test"]])
    copy = None
    if spec["format"] == "mufu":  # what the outputs copy from, among the inputs they saw
        seen = {a: [r[f"cand.{a}"] for r in splits["test"]] for a in spec["aux"]}
        seen["draft"] = [r["draft"] for r in splits["test"]]
        analysis = scoring.copy_analysis(outputs, seen)
        copy = {
            "closest_share": analysis["closest_share"],
            "novel_share_mean": analysis["novel_share_mean"],
        }
    return {
        "copy": copy,
        "outputs": outputs,
        "stats": stats.tolist(),
        "history": result.history,
        "best_epoch": result.best_epoch,
        "budget": asdict(result.budget),
        "tokens": result.train_tokens,
        "answer_tokens": result.answer_tokens,
    }


# ---------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------
def run_experiment(
    config: ExperimentConfig,
    execution: Execution | None = None,
    on_done: Callable[[int], None] | None = None,
    outcomes: list | None = None,
) -> dict:
    """Every task, then the statistics; ``outcomes`` collects the run_tasks outcomes."""
    model = base_model(config, execution)
    world = world_of(model)
    langs = needed_langs(config, world)
    seeds = [derive_seed(config.seed, "mufu-experiment", s) for s in range(config.seeds)]
    prep_cfg = {
        "model": model,
        "langs": langs,
        "sizes": [config.n_train, config.n_valid, config.n_test],
        "gen_batch": config.gen_batch,
    }
    prep = run_tasks(
        [Task(prepare_seed, prep_cfg, s, f"seed {i} teacher") for i, s in enumerate(seeds)],
        execution,
        command="mufu experiment prepare",
        on_done=on_done,
    )
    arms = config.all_arms()
    tasks = []
    for i, (s, data) in enumerate(zip(seeds, prep.results, strict=True)):
        for arm in arms:
            cfg = {
                "model": model,
                "spec": arm_spec(arm, config, world),
                "data": data,
                "finetune": asdict(config.finetune),
                "gen_batch": config.gen_batch,
            }
            tasks.append(Task(train_arm, cfg, derive_seed(s, "arm"), f"seed {i} {arm}"))
    trained = run_tasks(tasks, execution, command="mufu experiment train", on_done=on_done)
    if outcomes is not None:
        outcomes.extend([prep, trained])
    per = {
        arm: [trained.results[i * len(arms) + a] for i in range(len(seeds))]
        for a, arm in enumerate(arms)
    }
    return assemble(config, world, seeds, prep.results, per)


def assemble(config: ExperimentConfig, world: World, seeds, prepared, per: dict) -> dict:
    stats = {
        arm: [np.asarray(r["stats"], dtype=np.int64) for r in runs] for arm, runs in per.items()
    }
    stats["teacher"] = [
        chrf.segment_statistics([r["draft"] for r in d["test"]], [r["target"] for r in d["test"]])
        for d in prepared
    ]
    chrf_arm = {
        arm: _mean_per_seed([experiment_stats.corpus_chrf(s) for s in runs])
        for arm, runs in stats.items()
    }
    boot_seed = derive_seed(config.seed, "mufu-bootstrap")
    gains = {}
    for name, (a, b) in experiment_stats.GAINS.items():
        if a in stats and b in stats:
            gains[name] = experiment_stats.gain(
                stats, a, b, config.n_boot, derive_seed(boot_seed, name)
            )
        else:
            gains[name] = None
    budgets = {arm: Budget(**runs[0]["budget"]) for arm, runs in per.items()}
    for arm, runs in per.items():
        assert_equal_budgets({f"{arm} seed {i}": Budget(**r["budget"]) for i, r in enumerate(runs)})
    assert_equal_budgets(budgets)
    passed = experiment_stats.conditions(gains)
    results = {
        "hypothesis": "finetuning on Mufu prompts (candidates in related languages + the teacher's "
        "draft) beats plain finetuning and the teacher on a low-resource target",
        "control": "shuffled: the same prompts with another sentence's candidates (equal length, "
        "equal budget); unrelated: candidates from an unrelated family",
        "pass_conditions": experiment_stats.CONDITIONS,
        "chrf": chrf_arm,
        "gain": gains,
        "conditions": passed,
        "passed": all(ok is True for ok in passed.values()),
        "verdict": experiment_stats.verdict(gains, passed),
        "budget": {
            arm: {
                **asdict(budgets[arm]),
                "tokens": per[arm][0]["tokens"],
                "answer_tokens": per[arm][0]["answer_tokens"],
            }
            for arm in per
        },
        "budget_equal": True,
        "aux_langs": arm_spec("mufu", config, world)["aux"],
        "unrelated_langs": arm_spec("unrelated", config, world)["aux"],
        "seeds": seeds,
        "teacher_chrf_by_lang": {
            lang: float(np.mean([p["teacher_chrf"][lang] for p in prepared]))
            for lang in prepared[0]["teacher_chrf"]
        },
        "best_epoch": {arm: [r["best_epoch"] for r in runs] for arm, runs in per.items()},
        "validation": {arm: [r["history"] for r in runs] for arm, runs in per.items()},
        "copy": _copy_summary(per),
        "distances": {
            lang: round(d, 4)
            for lang, d in sorted(world.distances[TARGET].items(), key=lambda x: x[1])
        },
        "sizes": {"train": config.n_train, "valid": config.n_valid, "test": config.n_test},
    }
    grid = [k for k in config.k_grid]
    if grid:
        results["gain_vs_k"] = {
            str(k): experiment_stats.gain(
                stats,
                "mufu" if k == config.k else f"mufu_k{k}",
                "plain",
                config.n_boot,
                derive_seed(boot_seed, "k", k),
            )
            for k in sorted(set(grid))
        }
    results["headline"] = experiment_stats.headline(results)
    return results


def _mean_per_seed(values: list[float]) -> dict:
    return {"mean": float(np.mean(values)), "per_seed": values}


def _copy_summary(per: dict) -> dict:
    """For each mufu-format arm, averaged over seeds: the share of outputs closest to each
    input (sentence chrF) and the mean share of character n-grams found in no input."""
    out = {}
    for arm, runs in per.items():
        if runs[0]["copy"] is None:
            continue
        names = list(runs[0]["copy"]["closest_share"])
        out[arm] = {
            "closest_share": {
                n: float(np.mean([r["copy"]["closest_share"][n] for r in runs])) for n in names
            },
            "novel_share_mean": float(np.mean([r["copy"]["novel_share_mean"] for r in runs])),
        }
    return out
