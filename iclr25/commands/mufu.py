"""`iclr25 mufu`: translation as postediting with multilingual candidates (Mufu).

Thin commands over :mod:`iclr25.core.mufu` (Lim, Gupta, Yu, Cohn, ICLR 2025):
``candidates`` (a local teacher's draft and auxiliary-language candidates), ``prompt``
(Mufu or plain prompts), ``finetune`` (full or LoRA, loss on the translation only),
``translate`` (greedy, scored by sacrebleu's chrF/chrF++), ``score`` (chrF, chrF++,
sacrebleu's paired bootstrap) and ``experiment`` (the falsifiable embedded study).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from iclr25.commands.mufu_options import (
    DATA,
    MODEL,
    TRAIN,
    AuxOpt,
    BatchOpt,
    DataOpt,
    DownloadOpt,
    FormatOpt,
    InstructionOpt,
    KOpt,
    MaxNewOpt,
    ModelOpt,
    NamesOpt,
    RemoteCodeOpt,
    SourceLangOpt,
    TargetLangOpt,
    TemplateOpt,
    check_format,
    parse_names,
    parse_template,
    positive,
)
from iclr25.commands.mufu_views import (
    EXPERIMENT_KEYS,
    headline,
    render_experiment,
    render_finetune,
    render_prompt,
    render_score,
    render_translate,
)
from iclr25.demo import DemoStep
from iclr25.parallel_options import NoCacheOpt, SchedulerOpt, WorkersOpt
from iclr25.runner import Run, command

NAME = "mufu"
HELP = "Translation as postediting with multilingual candidates (Mufu): prompts, finetuning, chrF."

app = typer.Typer(no_args_is_help=True, help=HELP)

SaveOpt = Annotated[
    Path | None,
    typer.Option(
        "--save",
        help="Write the result here (never overwritten without --overwrite).",
        rich_help_panel=DATA,
    ),
]


def _prompt_options(fmt, target_lang, aux_langs, k, template, instruction, source_lang, names):
    from iclr25.core.mufu.pipeline import PromptOptions

    return PromptOptions(
        check_format(fmt) if fmt is not None else None,
        target_lang,
        aux_langs,
        positive(k, "--k"),
        parse_template(template),
        instruction,
        source_lang,
        parse_names(names),
    )


@command(
    app,
    "candidates",
    epilog="JSON results: n, target_lang, aux_langs, distances, teacher, saved_to, "
    "rows (without --save), draft_chrf (with a target column).",
)
def candidates(
    data: DataOpt,
    teacher: Annotated[
        str,
        typer.Option(
            "--teacher",
            help="Local teacher: a causal LM (prompted) or a seq2seq NLLB/M2M-style model.",
            rich_help_panel=MODEL,
        ),
    ] = "bundled",
    target_lang: TargetLangOpt = "tel",
    aux_langs: AuxOpt = "auto",
    k: KOpt = 5,
    pool: Annotated[
        str | None,
        typer.Option(
            "--pool", help="Languages --aux-langs auto may pick (default: the teacher's)."
        ),
    ] = None,
    save: SaveOpt = None,
    names: NamesOpt = None,
    max_new_tokens: MaxNewOpt = 64,
    batch_size: BatchOpt = 64,
    allow_download: DownloadOpt = False,
    trust_remote_code: RemoteCodeOpt = False,
    *,
    run: Run,
) -> None:
    """The teacher's draft ŷ_t and candidates ŷ_a in k auxiliary languages, per sentence."""
    from iclr25.core.mufu.pipeline import CandidatesConfig, run_candidates

    cfg = CandidatesConfig(
        data,
        teacher,
        target_lang,
        aux_langs,
        positive(k, "--k"),
        tuple(x.strip() for x in pool.split(",") if x.strip()) if pool else (),
        save,
        run.options.overwrite,
        positive(max_new_tokens, "--max-new-tokens"),
        positive(batch_size, "--batch-size"),
        allow_download,
        trust_remote_code,
        parse_names(names),
    )
    with run.progress("teacher batches") as advance, run.timer("generate_s"):
        results = run_candidates(cfg, on_batch=lambda n: advance(1))
    run.finish(results, cfg, None)


@command(
    app,
    "prompt",
    epilog="JSON results: n, prompt (format, languages, template), shuffled, prompts, targets.",
)
def prompt(
    data: DataOpt,
    fmt: FormatOpt = "mufu",
    target_lang: TargetLangOpt = None,
    aux_langs: AuxOpt = None,
    k: KOpt = 3,
    shuffle_aux: Annotated[
        bool,
        typer.Option(
            "--shuffle-aux",
            help="The control: give each sentence another sentence's candidates (a derangement).",
        ),
    ] = False,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Use this model's saved prompt (template, names).",
            rich_help_panel=MODEL,
        ),
    ] = None,
    template: TemplateOpt = None,
    instruction: InstructionOpt = None,
    source_lang: SourceLangOpt = None,
    names: NamesOpt = None,
    save: SaveOpt = None,
    *,
    run: Run,
) -> None:
    """Mufu prompts P_k(x) (instruction, source, candidates, draft) or plain prompts P_0(x)."""
    from iclr25.core.mufu import data as data_io
    from iclr25.core.mufu.pipeline import run_prompt

    opts = _prompt_options(
        fmt, target_lang, aux_langs, k, template, instruction, source_lang, names
    )
    results = run_prompt(data, opts, shuffle_aux, run.seed, model)
    if save is not None:
        rows = [
            {"prompt": p, "target": t or ""}
            for p, t in zip(results["prompts"], results["targets"], strict=True)
        ]
        data_io.write_rows(save, rows, ["prompt", "target"], run.options.overwrite)
        results["saved_to"] = str(save)
    run.finish(results, {"data": data, "options": opts, "save": save}, render_prompt)


@command(
    app,
    "finetune",
    epilog="JSON results: budget (examples, epochs, batch_size, steps, lr), history (per "
    "epoch loss, valid_chrf), best_epoch, best_valid_chrf, tokens, answer_tokens, lora, "
    "prompt, saved_to.",
)
def finetune(
    data: DataOpt,
    save: Annotated[
        Path,
        typer.Option(
            "--save",
            help="Folder for the finetuned model (never overwritten without --overwrite).",
            rich_help_panel=DATA,
        ),
    ],
    valid: Annotated[
        Path | None,
        typer.Option(
            "--valid",
            help="Validation data: chrF per epoch, best epoch kept.",
            rich_help_panel=DATA,
        ),
    ] = None,
    model: ModelOpt = "bundled",
    fmt: FormatOpt = "mufu",
    target_lang: TargetLangOpt = None,
    aux_langs: AuxOpt = None,
    k: KOpt = 3,
    epochs: Annotated[
        int, typer.Option("--epochs", help="Epochs (the paper: 25).", rich_help_panel=TRAIN)
    ] = 25,
    batch: Annotated[
        int,
        typer.Option("--train-batch", help="Examples per optimizer step.", rich_help_panel=TRAIN),
    ] = 16,
    lr: Annotated[
        float,
        typer.Option(
            "--lr", help="AdamW learning rate (warm-up then linear decay).", rich_help_panel=TRAIN
        ),
    ] = 1e-3,
    lora: Annotated[
        bool,
        typer.Option(
            "--lora",
            help="LoRA adapters (peft) instead of full finetuning; merged when saved.",
            rich_help_panel=TRAIN,
        ),
    ] = False,
    lora_r: Annotated[int, typer.Option("--lora-r", help="LoRA rank.", rich_help_panel=TRAIN)] = 8,
    lora_targets: Annotated[
        str | None,
        typer.Option(
            "--lora-targets",
            help="Module names for LoRA (default: peft's for the architecture).",
            rich_help_panel=TRAIN,
        ),
    ] = None,
    template: TemplateOpt = None,
    instruction: InstructionOpt = None,
    source_lang: SourceLangOpt = None,
    names: NamesOpt = None,
    max_new_tokens: MaxNewOpt = 64,
    allow_download: DownloadOpt = False,
    trust_remote_code: RemoteCodeOpt = False,
    *,
    run: Run,
) -> None:
    """Finetune a causal LM on Mufu (or plain) prompts; loss on the translation tokens only."""
    from iclr25.core.mufu.finetune import FinetuneConfig
    from iclr25.core.mufu.pipeline import FinetuneJob, run_finetune

    opts = _prompt_options(
        fmt, target_lang, aux_langs, k, template, instruction, source_lang, names
    )
    targets = tuple(x.strip() for x in lora_targets.split(",")) if lora_targets else None
    ft = FinetuneConfig(
        epochs=epochs,
        batch_size=batch,
        lr=lr,
        lora=lora,
        lora_r=positive(lora_r, "--lora-r"),
        lora_targets=targets,
        seed=run.seed,
        max_new_tokens=positive(max_new_tokens, "--max-new-tokens"),
    )
    job = FinetuneJob(
        data, valid, model, save, opts, run.options.overwrite, allow_download, trust_remote_code, ft
    )
    _torch_threads()
    with run.progress("optimizer steps") as advance, run.timer("finetune_s"):
        results = run_finetune(job, on_step=advance)
    run.finish(results, job, render_finetune)


@command(
    app,
    "translate",
    epilog="JSON results: chrf, chrf_pp, signature, signature_pp, n, per_sentence (with a "
    "target column), hypotheses, prompt, model. With --out: hypotheses.txt.",
)
def translate(
    data: DataOpt,
    model: ModelOpt = "bundled",
    fmt: FormatOpt = None,
    target_lang: TargetLangOpt = None,
    aux_langs: AuxOpt = None,
    k: KOpt = 3,
    template: TemplateOpt = None,
    instruction: InstructionOpt = None,
    source_lang: SourceLangOpt = None,
    names: NamesOpt = None,
    save_hyp: Annotated[
        Path | None,
        typer.Option(
            "--save-hyp", help="Write the hypotheses, one per line.", rich_help_panel=DATA
        ),
    ] = None,
    max_new_tokens: MaxNewOpt = 64,
    batch_size: BatchOpt = 64,
    allow_download: DownloadOpt = False,
    trust_remote_code: RemoteCodeOpt = False,
    *,
    run: Run,
) -> None:
    """Translate with a (finetuned) causal LM; chrF/chrF++ when the data has targets."""
    from iclr25.core.mufu import data as data_io
    from iclr25.core.mufu.pipeline import TranslateConfig, run_translate

    opts = _prompt_options(
        fmt, target_lang, aux_langs, k, template, instruction, source_lang, names
    )
    cfg = TranslateConfig(
        data,
        model,
        opts,
        positive(max_new_tokens, "--max-new-tokens"),
        positive(batch_size, "--batch-size"),
        allow_download,
        trust_remote_code,
        run.device.kind,
    )
    if save_hyp is not None:
        from iclr25 import atomic

        atomic.refuse_existing(save_hyp, run.options.overwrite)
    _torch_threads()
    with run.progress("sentences") as advance, run.timer("translate_s"):
        results = run_translate(cfg, on_batch=advance)
    if save_hyp is not None:
        data_io.write_lines(save_hyp, results["hypotheses"], run.options.overwrite)
    path = run.artifact_path("hypotheses.txt")
    if path is not None:
        data_io.write_lines(path, results["hypotheses"], True)
    run.finish(results, cfg, render_translate)


@command(
    app,
    "score",
    epilog="JSON results: chrf, chrf_pp, signature, signature_pp, n, per_sentence, bootstrap "
    "(score, mean, ci95, ci95_half, p_value, n_samples, seed), baseline_chrf.",
)
def score(
    hyp: Annotated[
        Path, typer.Option("--hyp", help="Hypotheses, one per line.", rich_help_panel=DATA)
    ],
    ref: Annotated[
        Path, typer.Option("--ref", help="References, one per line.", rich_help_panel=DATA)
    ],
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="A baseline system's lines: paired bootstrap p-value.",
            rich_help_panel=DATA,
        ),
    ] = None,
    bootstrap: Annotated[
        int,
        typer.Option(
            "--bootstrap",
            help="Bootstrap resamples (0: none); seed as sacrebleu (SACREBLEU_SEED, else 12345).",
        ),
    ] = 1000,
    *,
    run: Run,
) -> None:
    """chrF, chrF++ and sacrebleu's (paired) bootstrap, from exact vectorised statistics."""
    from iclr25.core.mufu.pipeline import ScoreConfig, run_score
    from iclr25.errors import UsageError

    if bootstrap < 0:
        raise UsageError(f"--bootstrap {bootstrap} is negative", "use 0 (none) or e.g. 1000")
    cfg = ScoreConfig(hyp, ref, baseline, bootstrap, run.device.kind)
    with run.timer("score_s"):
        results = run_score(cfg)
    run.finish(results, cfg, render_score)


@command(app, "experiment", epilog=f"JSON results: {EXPERIMENT_KEYS}.")
def experiment(
    quick: Annotated[
        bool, typer.Option("--quick", help="2 seeds, arms plain/mufu/shuffled.")
    ] = False,
    seeds: Annotated[
        int | None, typer.Option("--seeds", help="Seeds (default 5; --quick 2).")
    ] = None,
    k: Annotated[
        str,
        typer.Option(
            "--k", help="Auxiliary languages of the mufu arm; a list (1,3,5) adds gain vs k."
        ),
    ] = "3",
    arms: Annotated[
        str | None,
        typer.Option(
            "--arms",
            help="Arms to run, a subset of plain,mufu,shuffled,unrelated with plain and mufu "
            "(default: all; --quick: plain,mufu,shuffled). Without shuffled its condition is "
            "not evaluated and the run cannot pass.",
        ),
    ] = None,
    epochs: Annotated[
        int, typer.Option("--epochs", help="Finetuning epochs per arm.", rich_help_panel=TRAIN)
    ] = 6,
    n_train: Annotated[
        int,
        typer.Option("--n-train", help="Training pairs (the paper: 787).", rich_help_panel=DATA),
    ] = 787,
    n_valid: Annotated[
        int, typer.Option("--n-valid", help="Validation pairs (100).", rich_help_panel=DATA)
    ] = 100,
    n_test: Annotated[
        int, typer.Option("--n-test", help="Test pairs (200).", rich_help_panel=DATA)
    ] = 200,
    world_seed: Annotated[
        int | None,
        typer.Option("--world-seed", help="Another world: retrains the base model (long)."),
    ] = None,
    pretrain_steps: Annotated[
        int | None,
        typer.Option("--pretrain-steps", help="Base model steps for a full rerun (long)."),
    ] = None,
    n_boot: Annotated[
        int, typer.Option("--n-boot", help="Bootstrap draws for the intervals.")
    ] = 1000,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """The embedded, falsifiable experiment: mufu vs plain, teacher, shuffled and unrelated."""
    from iclr25 import parallel_options
    from iclr25.commands.mufu_options import parse_ints
    from iclr25.core.mufu.experiment import QUICK_ARMS, ExperimentConfig, run_experiment
    from iclr25.core.mufu.finetune import FinetuneConfig

    ks = parse_ints(k, "--k")
    config = ExperimentConfig(
        seeds=seeds if seeds is not None else (2 if quick else 5),
        arms=tuple(a.strip() for a in arms.split(","))
        if arms
        else (QUICK_ARMS if quick else ExperimentConfig.arms),
        k=3 if 3 in ks else ks[0],
        k_grid=ks if len(ks) > 1 else (),
        n_train=n_train,
        n_valid=n_valid,
        n_test=n_test,
        finetune=FinetuneConfig(
            epochs=positive(epochs, "--epochs"), batch_size=16, lr=1e-3, max_new_tokens=48
        ),
        world_seed=world_seed,
        pretrain_steps=pretrain_steps,
        n_boot=positive(n_boot, "--n-boot"),
        seed=run.seed,
    )
    execution = parallel_options.execution(workers, scheduler, no_cache)
    outcomes: list = []
    n_tasks = config.seeds * (1 + len(config.all_arms()))
    with run.progress("experiment tasks", total=n_tasks) as advance, run.timer("experiment_s"):
        results = run_experiment(config, execution, on_done=advance, outcomes=outcomes)
    for outcome in outcomes:
        parallel_options.report(run, outcome)
    if not results["passed"]:
        run.warn(results["verdict"])
    run.finish(results, config, render_experiment)


def _torch_threads() -> None:
    from iclr25.threads import set_torch_threads

    set_torch_threads(2)


def _demo_file(name: str) -> str:
    from iclr25.paths import package_file

    return str(package_file("iclr25.data", "mufu", name))


DEMO = (
    DemoStep(
        "mufu prompt",
        ("mufu", "prompt", "--data", _demo_file("demo.tsv"), "--aux-langs", "sam,ser,dov"),
        headline,
        timeout_s=60.0,
    ),
    DemoStep(
        "mufu translate",
        (
            "mufu",
            "translate",
            "--data",
            _demo_file("demo.tsv"),
            "--format",
            "plain",
            "--target-lang",
            "tel",
        ),  # fmt: skip
        headline,
        timeout_s=60.0,
    ),
    DemoStep(
        "mufu score",
        (
            "mufu",
            "score",
            "--hyp",
            _demo_file("demo.draft.txt"),
            "--ref",
            _demo_file("demo.ref.txt"),
            "--baseline",
            _demo_file("demo.sister.txt"),
        ),  # fmt: skip
        headline,
        timeout_s=60.0,
    ),
)
