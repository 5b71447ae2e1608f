"""Loading local models: students (causal LMs) and teachers (causal or seq2seq LMs).

Local files only unless ``allow_download``; remote code only with ``trust_remote_code``.
Errors name the path and the fix: a missing folder, a folder without a model config, a
config that is neither a causal nor a seq2seq language model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iclr25.errors import InputError
from iclr25.paths import package_file

BUNDLED = "bundled"  # --model bundled: the embedded model of iclr25/data/mufu


def bundled_path() -> Path:
    return package_file("iclr25.data", "mufu", "model")


@dataclass
class Loaded:
    model: Any
    tokenizer: Any
    kind: str  # "causal" or "seq2seq"
    path: str

    @property
    def max_positions(self) -> int | None:
        config = self.model.config
        for name in ("n_positions", "max_position_embeddings"):
            value = getattr(config, name, None)
            if isinstance(value, int) and value > 0:
                return value
        return None


def resolve(path: str | Path, allow_download: bool = False) -> str:
    """The model folder (``bundled`` → the embedded model); a hub id only with downloads."""
    if str(path) == BUNDLED:
        where = bundled_path()
        if not (where / "config.json").exists():
            raise InputError(
                f"the embedded model is not built in this installation "
                f"({where} has no config.json)",
                "build it with `python scripts/train_mufu_model.py` (about 15 CPU minutes), "
                "or pass a local model folder",
            )
        return str(where)
    p = Path(path)
    if p.exists():
        if not p.is_dir() or not (p / "config.json").exists():
            raise InputError(
                f"{path} is not a model folder (no config.json)",
                "pass a folder written by save_pretrained, e.g. one from `iclr25 mufu finetune`",
            )
        return str(p)
    if allow_download:
        return str(path)
    raise InputError(
        f"model path {path} does not exist",
        "pass a local model folder (or `bundled`); hub ids need --allow-download",
    )


def load(
    path: str | Path,
    *,
    kinds: tuple[str, ...] = ("causal", "seq2seq"),
    allow_download: bool = False,
    trust_remote_code: bool = False,
) -> Loaded:
    """Load a model of one of ``kinds`` with its tokenizer, in eval mode on the CPU."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    where = resolve(path, allow_download)
    hf_logging.disable_progress_bar()  # stderr belongs to our progress bar, warnings, errors
    hf_logging.set_verbosity_error()  # e.g. "loss_type=None ..." on every GPT-2 forward
    local = not allow_download
    try:
        config = AutoConfig.from_pretrained(
            where, local_files_only=local, trust_remote_code=trust_remote_code
        )
    except (OSError, ValueError) as exc:
        raise InputError(
            f"cannot read the model config at {path}: {_first_line(exc)}", _fix()
        ) from None
    kind = "seq2seq" if getattr(config, "is_encoder_decoder", False) else "causal"
    if kind not in kinds:
        wanted = " or ".join(kinds)
        raise InputError(f"{path} is a {kind} model, not a {wanted} LM", _fix(kinds))
    auto = AutoModelForSeq2SeqLM if kind == "seq2seq" else AutoModelForCausalLM
    try:
        model = auto.from_pretrained(
            where, local_files_only=local, trust_remote_code=trust_remote_code
        )
        tokenizer = AutoTokenizer.from_pretrained(
            where, local_files_only=local, trust_remote_code=trust_remote_code
        )
    except ValueError as exc:
        raise InputError(
            f"{path} is not a {kind} language model ({_first_line(exc)})", _fix(kinds)
        ) from None
    except OSError as exc:
        raise InputError(f"cannot load the model at {path}: {_first_line(exc)}", _fix()) from None
    model.eval()
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    return Loaded(model, tokenizer, kind, where)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _fix(kinds: tuple[str, ...] = ("causal", "seq2seq")) -> str:
    what = " or ".join(f"a {k} LM" for k in kinds)
    return f"pass a local folder holding {what} and its tokenizer (transformers save_pretrained)"
