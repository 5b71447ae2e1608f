"""The `iclr25 mufu` subcommands as plain functions: candidates, prompt, finetune,
translate, score. Each takes a config dataclass and returns a JSON-able dict.

A model folder may hold ``mufu_prompt.json`` (written by ``finetune``, shipped with the
bundled model): the prompt format, languages, template and display names it was
trained with. Options given on the command line win over it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from iclr25.core.mufu import chrf, data, langs, scoring
from iclr25.core.mufu.prompts import PromptSpec, check_columns, render
from iclr25.errors import InputError, UsageError

PROMPT_FILE = "mufu_prompt.json"


@dataclass(frozen=True)
class PromptOptions:
    """Prompt choices from the command line (None: the model's, else the default)."""

    format: str | None = None
    target_lang: str | None = None
    aux_langs: str | None = None  # "a,b,c" | "auto" | "all"
    k: int = 3
    template: str | None = None
    instruction: str | None = None
    source_lang: str | None = None
    names: dict = field(default_factory=dict)


def saved_prompt(model_path: str | None) -> dict:
    if model_path is None:
        return {}
    path = Path(model_path) / PROMPT_FILE
    return json.loads(path.read_text()) if path.exists() else {}


def resolve_spec(
    opts: PromptOptions, rows: Sequence[dict], saved: dict, pool: Sequence[str] | None = None
) -> PromptSpec:
    """The PromptSpec for ``rows``: options, then the model's saved prompt, then defaults."""
    fmt = opts.format or saved.get("format", "mufu")
    target = opts.target_lang or saved.get("target_lang", "tel")
    aux: tuple[str, ...] = ()
    if fmt == "mufu":
        available = list(pool) if pool is not None else data.candidate_langs(rows)
        if opts.aux_langs is not None:
            aux = tuple(langs.parse_aux(opts.aux_langs, target, available, opts.k))
        elif saved.get("aux_langs"):
            aux = tuple(saved["aux_langs"])
        else:
            aux = tuple(langs.parse_aux("all", target, available, opts.k))
    names = {**saved.get("names", {}), **opts.names}
    return PromptSpec(
        fmt,
        target,
        aux,
        opts.template if opts.template is not None else saved.get("template"),
        opts.instruction if opts.instruction is not None else saved.get("instruction"),
        opts.source_lang or saved.get("source_lang", "src"),
        names,
    )


def spec_dict(spec: PromptSpec) -> dict:
    return {
        "format": spec.format,
        "target_lang": spec.target_lang,
        "aux_langs": list(spec.aux_langs),
        "template": spec.template,
        "instruction": spec.instruction,
        "source_lang": spec.source_lang,
        "names": dict(spec.names),
    }


def shuffle_candidates(rows: list[dict], spec: PromptSpec, seed: int) -> list[dict]:
    """The shuffled control: each row gets another row's candidates (a derangement)."""
    from iclr25.core.mufu.experiment import derangement

    perm = derangement(len(rows), seed)
    return [
        {**r, **{f"cand.{a}": rows[perm[i]][f"cand.{a}"] for a in spec.aux_langs}}
        for i, r in enumerate(rows)
    ]


# ---------------------------------------------------------------------------------------
# candidates
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CandidatesConfig:
    data: Path
    teacher: str
    target_lang: str
    aux_langs: str = "auto"
    k: int = 5
    pool: tuple[str, ...] = ()
    save: Path | None = None
    overwrite: bool = False
    max_new_tokens: int = 64
    batch_size: int = 64
    allow_download: bool = False
    trust_remote_code: bool = False
    names: dict = field(default_factory=dict)


def run_candidates(cfg: CandidatesConfig, on_batch: Callable[[int], None] | None = None) -> dict:
    """Draft ŷ_t and candidates ŷ_a from a local teacher; rows saved with new columns."""
    from iclr25.core.mufu.generate import generate_causal, generate_seq2seq
    from iclr25.core.mufu.models import load

    rows = data.read_rows(cfg.data, ("source",))
    if cfg.save is not None:
        from iclr25 import atomic

        atomic.refuse_existing(Path(cfg.save), cfg.overwrite)
    teacher = load(
        cfg.teacher, allow_download=cfg.allow_download, trust_remote_code=cfg.trust_remote_code
    )
    saved = saved_prompt(teacher.path)
    pool = list(cfg.pool) or _teacher_pool(teacher, saved)
    aux = langs.parse_aux(cfg.aux_langs, cfg.target_lang, pool, cfg.k)
    names = {**saved.get("names", {}), **cfg.names}
    outputs: dict[str, list[str]] = {}
    for lang in [cfg.target_lang, *aux]:
        if teacher.kind == "seq2seq":
            outputs[lang] = generate_seq2seq(
                teacher,
                [r["source"] for r in rows],
                lang,
                max_new_tokens=cfg.max_new_tokens,
                batch_size=cfg.batch_size,
                on_batch=on_batch,
            )
        else:
            spec = PromptSpec(
                "plain",
                lang,
                (),
                saved.get("plain_template"),
                None,
                saved.get("source_lang", "src"),
                names,
            )
            prompts = [render(r, spec) for r in rows]
            outputs[lang] = generate_causal(
                teacher,
                prompts,
                max_new_tokens=cfg.max_new_tokens,
                batch_size=cfg.batch_size,
                on_batch=on_batch,
            )
    out_rows = []
    for i, r in enumerate(rows):
        new = {k: v for k, v in r.items() if k != "_line"}
        new["draft"] = outputs[cfg.target_lang][i]
        for lang in aux:
            new[f"cand.{lang}"] = outputs[lang][i]
        out_rows.append(new)
    columns = list(dict.fromkeys([*out_rows[0].keys()]))
    if cfg.save is not None:
        data.write_rows(cfg.save, out_rows, columns, cfg.overwrite)
    results = {
        "n": len(rows),
        "target_lang": cfg.target_lang,
        "aux_langs": aux,
        "distances": {a: round(d, 4) for a, d in langs.distances(cfg.target_lang, aux).items()}
        if cfg.aux_langs == "auto"
        else None,
        "teacher": {"path": teacher.path, "kind": teacher.kind},
        "saved_to": str(cfg.save) if cfg.save else None,
        "rows": out_rows if cfg.save is None else None,
    }
    if all("target" in r for r in rows):
        results["draft_chrf"] = chrf.score(
            chrf.segment_statistics(outputs[cfg.target_lang], [r["target"] for r in rows])
        )
    return results


def _teacher_pool(teacher, saved: dict) -> list[str]:
    if saved.get("languages"):
        return list(saved["languages"])
    if teacher.kind == "seq2seq":
        found = langs.seq2seq_pool(teacher.tokenizer)
        if found:
            return found
    raise UsageError(
        "--aux-langs auto needs the teacher's languages",
        "list them with --pool a,b,c (or give --aux-langs a,b,c)",
    )


# ---------------------------------------------------------------------------------------
# prompt
# ---------------------------------------------------------------------------------------
def run_prompt(
    path: Path, opts: PromptOptions, shuffle: bool, seed: int, model: str | None = None
) -> dict:
    rows = data.read_rows(path, ("source",))
    saved = saved_prompt(_model_path(model))
    spec = resolve_spec(opts, rows, saved)
    check_columns(rows, spec, str(path))
    if shuffle:
        if spec.format != "mufu":
            raise UsageError(
                "--shuffle-aux needs --format mufu", "drop --shuffle-aux or use --format mufu"
            )
        rows = shuffle_candidates(rows, spec, seed)
    prompts = [render(r, spec) for r in rows]
    return {
        "n": len(prompts),
        "prompt": spec_dict(spec),
        "shuffled": shuffle,
        "prompts": prompts,
        "targets": [r.get("target") for r in rows],
    }


def _model_path(model: str | None) -> str | None:
    if model is None:
        return None
    from iclr25.core.mufu.models import resolve

    return resolve(model)


# ---------------------------------------------------------------------------------------
# finetune
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FinetuneJob:
    data: Path
    valid: Path | None
    model: str
    save: Path
    prompt: PromptOptions = field(default_factory=PromptOptions)
    overwrite: bool = False
    allow_download: bool = False
    trust_remote_code: bool = False
    finetune: object = None  # FinetuneConfig


def check_fit(loaded, prompts: Sequence[str], answers: Sequence[str], k: int | None) -> None:
    """An input error when a training example is longer than the model's positions."""
    from iclr25.core.mufu import sft

    limit = loaded.max_positions
    if limit is None:
        return
    enc = sft.encode(loaded.tokenizer, prompts, answers)
    longest = max(len(ids) for ids in enc.input_ids)
    if longest > limit:
        hint = f"use a smaller --k (now {k})" if k else "use shorter sentences"
        raise InputError(
            f"a training example of {longest} tokens exceeds the model's {limit} positions", hint
        )


def run_finetune(job: FinetuneJob, on_step: Callable[[int], None] | None = None) -> dict:
    from iclr25 import atomic
    from iclr25.core.mufu.finetune import finetune
    from iclr25.core.mufu.models import load

    atomic.refuse_existing(Path(job.save), job.overwrite)
    train = data.read_rows(job.data, ("source", "target"))
    valid = data.read_rows(job.valid, ("source", "target")) if job.valid is not None else []
    loaded = load(
        job.model,
        kinds=("causal",),
        allow_download=job.allow_download,
        trust_remote_code=job.trust_remote_code,
    )
    saved = saved_prompt(loaded.path)
    spec = resolve_spec(job.prompt, train, saved)
    check_columns(train, spec, str(job.data))
    check_columns(valid, spec, str(job.valid))
    prompts = [render(r, spec) for r in train]
    answers = [r["target"] for r in train]
    k = len(spec.aux_langs) or None
    check_fit(loaded, prompts, answers, k)
    v_prompts = [render(r, spec) for r in valid]
    result = finetune(
        loaded, prompts, answers, v_prompts, [r["target"] for r in valid], job.finetune, on_step
    )
    prompt_file = {**saved, **spec_dict(spec)}
    with atomic.staged_dir(Path(job.save), overwrite=job.overwrite) as staging:
        result.model.save_pretrained(staging)
        loaded.tokenizer.save_pretrained(staging)
        (staging / PROMPT_FILE).write_text(
            json.dumps(prompt_file, indent=2, ensure_ascii=False) + "\n"
        )
        for extra in ("world.json",):
            src = Path(loaded.path) / extra
            if src.exists():
                (staging / extra).write_text(src.read_text())
    return {
        "budget": asdict(result.budget),
        "history": result.history,
        "best_epoch": result.best_epoch,
        "best_valid_chrf": result.best_valid_chrf,
        "tokens": result.train_tokens,
        "answer_tokens": result.answer_tokens,
        "lora": job.finetune.lora,
        "prompt": spec_dict(spec),
        "saved_to": str(job.save),
    }


# ---------------------------------------------------------------------------------------
# translate
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TranslateConfig:
    data: Path
    model: str
    prompt: PromptOptions = field(default_factory=PromptOptions)
    max_new_tokens: int = 64
    batch_size: int = 64
    allow_download: bool = False
    trust_remote_code: bool = False
    device: str = "cpu"


def run_translate(cfg: TranslateConfig, on_batch: Callable[[int], None] | None = None) -> dict:
    from iclr25.core.mufu.generate import generate_causal
    from iclr25.core.mufu.models import load

    rows = data.read_rows(cfg.data, ("source",))
    loaded = load(
        cfg.model,
        kinds=("causal",),
        allow_download=cfg.allow_download,
        trust_remote_code=cfg.trust_remote_code,
    )
    spec = resolve_spec(cfg.prompt, rows, saved_prompt(loaded.path))
    check_columns(rows, spec, str(cfg.data))
    prompts = [render(r, spec) for r in rows]
    hyps = generate_causal(
        loaded,
        prompts,
        max_new_tokens=cfg.max_new_tokens,
        batch_size=cfg.batch_size,
        k=len(spec.aux_langs) or None,
        on_batch=on_batch,
    )
    results = {"n": len(hyps), "prompt": spec_dict(spec), "model": loaded.path, "hypotheses": hyps}
    if all(r.get("target") for r in rows) or all("target" in r for r in rows):
        scored = scoring.corpus(hyps, [r["target"] for r in rows], cfg.device)
        scored.pop("_stats")
        results.update(scored)
    return results


# ---------------------------------------------------------------------------------------
# score
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScoreConfig:
    hyp: Path
    ref: Path
    baseline: Path | None = None
    n_bootstrap: int = 1000
    device: str = "cpu"


def run_score(cfg: ScoreConfig) -> dict:
    hyps = data.read_lines(cfg.hyp, "hypotheses")
    refs = data.read_lines(cfg.ref, "references")
    if len(hyps) != len(refs):
        raise InputError(
            f"{cfg.hyp} has {len(hyps)} lines but {cfg.ref} has {len(refs)}",
            "give one hypothesis per reference line",
        )
    base = None
    if cfg.baseline is not None:
        base = data.read_lines(cfg.baseline, "baseline")
        if len(base) != len(refs):
            raise InputError(
                f"{cfg.baseline} has {len(base)} lines but {cfg.ref} has {len(refs)}",
                "give one baseline line per reference line",
            )
    results = scoring.corpus(hyps, refs, cfg.device)
    stats = results.pop("_stats")
    base_stats = (
        chrf.segment_statistics(base, refs, chrf.ChrfParams(), cfg.device)
        if base is not None
        else None
    )
    results["bootstrap"] = None
    if cfg.n_bootstrap > 0:
        results["bootstrap"] = scoring.bootstrap(
            stats,
            base_stats,
            n_samples=cfg.n_bootstrap,
            seed=scoring.sacrebleu_seed(),
            device=cfg.device,
        )
    if base is not None:
        results["baseline_chrf"] = chrf.score(base_stats)
    return results


__all__ = [
    "PromptOptions",
    "CandidatesConfig",
    "TranslateConfig",
    "ScoreConfig",
    "asdict",
    "replace",
]
