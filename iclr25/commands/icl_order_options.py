"""Model and task options shared by `iclr25 icl-order` and its subcommands, declared once.

:func:`with_source_options` appends them to a command's signature (as the runner appends
the common options) and hands the command one :class:`Source`; :func:`load_source` turns
it into a loaded model, the encoded task and the context every result carries. Like
every command module this imports only typer, the stdlib and light iclr25 modules at
module level.
"""

import functools
import inspect
from dataclasses import asdict, dataclass
from typing import Annotated, Any

import typer

from iclr25.runner import Run

_MODEL = "Model"
_TASK = "Task"


@dataclass(frozen=True)
class Source:
    """Which model, which task, and how to prompt it."""

    model: str | None = None  # None = the embedded model
    task: str | None = None  # None = the built-in symbolic task
    template: str | None = None  # None = the default for the model and task
    label_words: str | None = None  # "VALUE=WORD,..."
    text_column: str = "text"
    label_column: str = "label"
    dtype: str = "auto"
    batch_size: int = 64
    trust_remote_code: bool = False
    allow_download: bool = False


def _option(annotation: Any, *names: str, panel: str, **kwargs: Any) -> Any:
    return Annotated[annotation, typer.Option(*names, rich_help_panel=panel, **kwargs)]


_OPTIONS = {
    "model": _option(
        str | None,
        "--model",
        panel=_MODEL,
        show_default=False,
        help="Causal LM folder saved with save_pretrained, or a Hugging Face id (org/name) "
        "found in the local cache ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub), "
        "offline; default: the embedded model.",
    ),
    "dtype": _option(
        str,
        "--dtype",
        panel=_MODEL,
        help="auto|float32|float16|bfloat16 (auto: float32 on CPU, the checkpoint's on CUDA).",
    ),
    "batch_size": _option(
        int,
        "--batch-size",
        panel=_MODEL,
        help="Sequences per forward pass (lower it for a large model on a small device).",
    ),
    "trust_remote_code": _option(
        bool,
        "--trust-remote-code",
        panel=_MODEL,
        help="Run code shipped with the model (only for code you trust).",
    ),
    "allow_download": _option(
        bool,
        "--allow-download",
        panel=_MODEL,
        help="Let transformers download a hub id that is not in the local cache.",
    ),
    "task": _option(
        str | None,
        "--task",
        panel=_TASK,
        show_default=False,
        help="symbolic | symbolic-binary | categories, or a .jsonl/.csv file (text, label).",
    ),
    "template": _option(
        str | None,
        "--template",
        panel=_TASK,
        show_default=False,
        help="Prompt template with {text} then {label}; \\n is a newline. Default: the "
        "embedded model's training format '{text} {label}\\n' with the embedded model or a "
        "built-in task, else 'Input: {text}\\nLabel: {label}\\n'.",
    ),
    "label_words": _option(
        str | None,
        "--label-words",
        panel=_TASK,
        show_default=False,
        help="Map label values to words, e.g. '0=negative,1=positive' (a word of several "
        "tokens is scored by their mean log-probability).",
    ),
    "text_column": _option(
        str, "--text-column", panel=_TASK, help="Column/field with the input text."
    ),
    "label_column": _option(
        str, "--label-column", panel=_TASK, help="Column/field with the label."
    ),
}
_DEFAULTS = asdict(Source())


def _with_options(names: tuple[str, ...]):
    def decorate(fn):
        """Append the ``names`` options to ``fn``'s signature; ``fn`` gets ``source``."""
        sig = inspect.signature(fn)
        own = [p for p in sig.parameters.values() if p.name not in ("source", "run")]
        shared = [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=_DEFAULTS[name],
                annotation=_OPTIONS[name],
            )
            for name in names
        ]
        run = sig.parameters["run"]

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            source = Source(**{name: kwargs.pop(name) for name in names})
            return fn(*args, source=source, **kwargs)

        wrapper.__signature__ = sig.replace(parameters=[*own, *shared, run])
        wrapper.__annotations__ = {p.name: p.annotation for p in (*own, *shared, run)}
        return wrapper

    return decorate


#: the model and task options (``--task`` and the rest)
with_source_options = _with_options(tuple(_OPTIONS))
#: the model and prompt options without ``--task`` (``select`` reads ``--demos``)
with_model_options = _with_options(tuple(n for n in _OPTIONS if n != "task"))


def execution_options(workers: int, scheduler: str | None, no_cache: bool):
    from iclr25.parallel_options import execution

    return execution(workers, scheduler, no_cache)


def shard_runner(run: Run, cfg, execution, lm_cfg, encoded, command: str, advance):
    """Shards through the execution layer; the command's own model serves in-process."""
    from iclr25.core.icl_order import shards
    from iclr25.parallel_options import report

    return shards.shard_runner(
        lm_cfg, encoded, cfg, execution, command, advance, lambda outcome: report(run, outcome)
    )


def warn_if_at_chance(run: Run, accuracy: float, interval, chance: float, task: str) -> None:
    """Warn when the accuracy's 95 % interval includes the task's chance level."""
    if interval and interval[0] <= chance <= interval[1] or accuracy <= chance:
        run.warn(
            f"the model is at chance on {task} (accuracy {accuracy:.3f}, 95% interval "
            f"[{interval[0]:.3f}, {interval[1]:.3f}], chance {chance:.3f}): results say "
            "nothing about order"
        )


def load_source(run: Run, source: Source):
    """(loaded model, encoded task, context for the results, model config); warns when
    the task does not suit the model (unknown words, the embedded model's format)."""
    from iclr25.core.icl_order.prompts import encode_task
    from iclr25.core.icl_order.tasks import Template, parse_label_words, resolve_task

    template = Template.from_cli(source.template) if source.template is not None else None
    task = resolve_task(
        source.task,
        run.seed,
        template,
        parse_label_words(source.label_words),
        source.text_column,
        source.label_column,
        embedded_model=source.model is None,
    )
    cfg = _model_config(run, source)
    lm = _load(run, cfg)
    encoded = encode_task(lm.tokenizer, task)
    _warn_about_fit(run, source, task, encoded)
    context = {
        "model": cfg.name,
        "task": task.name,
        "template": task.template.text,
        "label_words": list(task.label_words),
        "label_tokens": [len(t) for t in encoded.label_tokens],
        "chance": task.chance,
    }
    return lm, encoded, context, cfg


def _load(run: Run, cfg):
    from iclr25.core.icl_order.models import load_model
    from iclr25.core.icl_order.shards import remember

    with run.timer("load_s"):
        lm = load_model(cfg)
    remember(cfg, lm)  # in-process shards use this model instead of loading it again
    return lm


def _model_config(run: Run, source: Source):
    from iclr25.core.icl_order.models import ModelConfig

    return ModelConfig(
        source.model,
        source.dtype,
        run.device.kind,
        source.batch_size,
        source.trust_remote_code,
        source.allow_download,
    )


def load_pool_and_inputs(run: Run, source: Source, demos, inputs):
    """``select``: (model, pool task with the inputs appended, encoded, pool size,
    inputs, context, model config). Files are read and checked before the model loads."""
    from iclr25.core.icl_order.prompts import encode_task
    from iclr25.core.icl_order.select import read_inputs, with_inputs
    from iclr25.core.icl_order.tasks import (
        BUILTIN_TEMPLATE,
        Template,
        load_task_file,
        parse_label_words,
    )

    template = Template.from_cli(source.template) if source.template is not None else None
    if template is None and source.model is None:
        template = Template(BUILTIN_TEMPLATE)
    pool = load_task_file(
        demos,
        template,
        parse_label_words(source.label_words),
        source.text_column,
        source.label_column,
    )
    texts = read_inputs(inputs, source.text_column)
    task = with_inputs(pool, texts)
    cfg = _model_config(run, source)
    lm = _load(run, cfg)
    encoded = encode_task(lm.tokenizer, task)
    _warn_about_fit(run, source, pool, encoded)
    context = {
        "model": cfg.name,
        "demos": str(demos),
        "template": task.template.text,
        "label_words": list(task.label_words),
    }
    return lm, task, encoded, len(pool), texts, context, cfg


def _warn_about_fit(run: Run, source: Source, task, encoded) -> None:
    from iclr25.core.icl_order.tasks import is_builtin

    if source.model is None and not is_builtin(task.name) and source.template is None:
        run.warn(
            f"the embedded model learned in context only in its training format "
            f"{task.template.text!r}: {task.name} is prompted in it (pass --template to "
            "choose another, or --model for a real language model)"
        )
    if encoded.unknown_share > 0:
        model = "the embedded model's 137-word" if source.model is None else "the tokenizer's"
        run.warn(
            f"{100 * encoded.unknown_share:.0f}% of {task.name}'s input tokens are unknown "
            f"to {model} vocabulary ([UNK]); "
            + ("pass --model PATH for real text" if source.model is None else "check --task")
        )
    multi = [w for w, t in zip(task.label_words, encoded.label_tokens, strict=True) if len(t) > 1]
    if multi:
        run.log(f"label words of several tokens, scored by their mean log-probability: {multi}")
