"""Loading causal LMs and running them on batches of token sequences.

Any Hugging Face causal LM loads through ``AutoModelForCausalLM`` / ``AutoTokenizer``; the
embedded model (``iclr25/data/icl_model``) goes through the very same ``from_pretrained``
path. Local files only unless ``allow_download``; ``trust_remote_code`` only on request.

Batches are **left-padded** with an attention mask and explicit ``position_ids`` (the
count of real tokens before each one), so the last real token of every row sits at index
-1 and gets the same positions as in an unpadded forward: batched = single forwards.
Only the logits of the last few positions are computed (``logits_to_keep``, when the
model takes it): a real vocabulary of 150,000 words times every position of a batch would
otherwise cost gigabytes.

The key/value cache API moved across transformers versions (``past_key_values`` became
``cache`` in 5.x; ``DynamicCache`` stores ``layers[i].keys`` in 5.x and ``key_cache[i]``
in 4.x): :func:`cache_keyword`, :func:`cache_to_tensors` and :func:`tensors_to_cache`
hide the difference.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iclr25.errors import InputError, UsageError
from iclr25.threads import set_torch_threads

DTYPES = ("auto", "float32", "float16", "bfloat16")


def embedded_model_path() -> Path:
    from iclr25.paths import package_file

    return package_file("iclr25.data", "icl_model")


@dataclass(frozen=True)
class ModelConfig:
    model: str | None = None  # path or hub id (local cache first); None = the embedded model
    dtype: str = "auto"  # float32 on CPU, the checkpoint's dtype on CUDA
    device: str = "cpu"  # "cpu" or "cuda" (from the run's device choice)
    batch_size: int = 64  # sequences per forward pass
    trust_remote_code: bool = False  # never run a repository's code unless asked
    allow_download: bool = False  # local files only unless asked

    @property
    def name(self) -> str:
        return self.model or "embedded"


@dataclass
class LoadedModel:
    model: Any  # a transformers PreTrainedModel, in eval mode
    tokenizer: Any
    device: Any  # torch.device
    name: str
    batch_size: int
    n_layers: int
    accepts_position_ids: bool
    cache_keyword: str | None  # "cache", "past_key_values" or None (no cache support)
    logits_keyword: str | None = None  # "logits_to_keep" (or the older name) or None

    @property
    def pad_id(self) -> int:
        return int(self.tokenizer.pad_token_id)


def resolve_source(cfg: ModelConfig) -> str:
    """A folder to load: the embedded model, a local path, or a hub id's snapshot in the
    local Hugging Face cache (``hub_cache.py``); a hub id that is not cached is passed
    to transformers only with ``allow_download``."""
    from iclr25.core.icl_order.hub_cache import cache_folders, find_cached_model, looks_like_hub_id

    if cfg.model is None:
        return str(embedded_model_path())
    path = Path(cfg.model).expanduser()
    if path.exists():
        return _checked_folder(path, cfg.model)
    if not looks_like_hub_id(cfg.model):
        raise InputError(f"--model {cfg.model} does not exist", "check the path")
    folders = cache_folders()
    cached = find_cached_model(cfg.model, folders)
    if cached is not None:
        return str(cached)
    if cfg.allow_download:
        return cfg.model
    searched = ", ".join(str(f) for f in folders)
    raise InputError(
        f"--model {cfg.model} is neither a folder nor a model in the local Hugging Face "
        f"cache (searched {searched})",
        "check the path or the id, set HF_HUB_CACHE / HF_HOME to your cache, or pass "
        "--allow-download to fetch it",
    )


def _checked_folder(path: Path, given: str) -> str:
    if not path.is_dir():
        raise InputError(
            f"--model {given} is a file, not a model folder",
            "pass the folder holding config.json and the weights",
        )
    if not (path / "config.json").exists():
        raise InputError(
            f"--model {given} has no config.json",
            "pass a folder saved with save_pretrained (config.json, weights, tokenizer)",
        )
    return str(path)


def _torch_dtype(name: str, device: str):
    import torch

    if name == "auto":
        return torch.float32 if device == "cpu" else "auto"
    if name not in DTYPES:
        raise UsageError(f"--dtype {name} is not supported", f"use one of {', '.join(DTYPES)}")
    return getattr(torch, name)


def _dtype_keyword() -> str:
    """``dtype`` since transformers 4.56, ``torch_dtype`` before."""
    import transformers

    major, minor = (int(p) for p in transformers.__version__.split(".")[:2])
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"


def _load_tokenizer(source: str, cfg: ModelConfig):
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(
            source,
            local_files_only=not cfg.allow_download,
            trust_remote_code=cfg.trust_remote_code,
        )
    except Exception as exc:  # OSError, ValueError, ...: all mean "no usable tokenizer"
        raise InputError(
            f"--model {cfg.name}: no tokenizer could be loaded ({type(exc).__name__}: {exc})",
            "save the tokenizer next to the weights (tokenizer.save_pretrained)",
        ) from None
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        if tokenizer.eos_token_id is None:
            raise InputError(
                f"--model {cfg.name}: the tokenizer has neither a pad nor an eos token",
                "set tokenizer.pad_token before saving the tokenizer",
            )
        tokenizer.pad_token = tokenizer.eos_token  # masked out anyway
    return tokenizer


def _load_weights(source: str, cfg: ModelConfig):
    from transformers import AutoConfig, AutoModelForCausalLM

    common = dict(local_files_only=not cfg.allow_download, trust_remote_code=cfg.trust_remote_code)
    try:
        config = AutoConfig.from_pretrained(source, **common)
    except Exception as exc:
        raise InputError(
            f"--model {cfg.name}: its config could not be read ({type(exc).__name__}: {exc})",
            "pass a transformers model folder; add --trust-remote-code only for code you trust",
        ) from None
    try:
        dtype = {_dtype_keyword(): _torch_dtype(cfg.dtype, cfg.device)}
        model = AutoModelForCausalLM.from_pretrained(source, **dtype, **common)
    except ValueError as exc:
        if "Unrecognized configuration class" in str(exc) or "AutoModelForCausalLM" in str(exc):
            raise InputError(
                f"--model {cfg.name} is a {config.model_type!r} model, not a causal LM",
                "pass a decoder-only language model (GPT-2, Llama, Qwen, ...)",
            ) from None
        raise InputError(f"--model {cfg.name}: {exc}", "check the model folder") from None
    except OSError as exc:
        raise InputError(
            f"--model {cfg.name}: the weights could not be loaded ({exc})",
            "check that the folder holds model.safetensors (or pytorch_model.bin)",
        ) from None
    return model


def load_model(cfg: ModelConfig) -> LoadedModel:
    """Load model and tokenizer, move the model to ``cfg.device`` in eval mode."""
    if cfg.batch_size < 1:
        raise UsageError(f"--batch-size {cfg.batch_size} is not positive", "use 1 or more")
    source = resolve_source(cfg)  # before the heavy imports: a wrong path fails fast
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # stderr belongs to our progress bar and errors
    if cfg.model is None:  # the embedded model is tiny: one thread (iclr25.threads)
        set_torch_threads(1)

    tokenizer = _load_tokenizer(source, cfg)
    model = _load_weights(source, cfg)
    device = torch.device(cfg.device)
    model.to(device).eval()
    params = inspect.signature(model.forward).parameters
    keyword = next((k for k in ("cache", "past_key_values") if k in params), None)
    names = ("logits_to_keep", "num_logits_to_keep")  # transformers >= 4.50, 4.45 - 4.49
    logits_keyword = next((k for k in names if k in params), None)
    n_layers = getattr(model.config, "num_hidden_layers", None) or model.config.n_layer
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        device=device,
        name=cfg.name,
        batch_size=cfg.batch_size,
        n_layers=int(n_layers),
        accepts_position_ids="position_ids" in params,
        cache_keyword=keyword,
        logits_keyword=logits_keyword,
    )


# -- batched forwards --------------------------------------------------------------------
def left_pad(sequences: list[list[int]], pad_id: int, device):
    """input_ids and attention_mask (B, T), each row right-aligned; position_ids (B, T)."""
    import torch

    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        if seq:
            ids[row, width - len(seq) :] = torch.tensor(seq, dtype=torch.long)
            mask[row, width - len(seq) :] = 1
    positions = (mask.cumsum(dim=1) - 1).clamp(min=0)  # (B, T)
    return ids.to(device), mask.to(device), positions.to(device)


def tail_kwargs(lm: LoadedModel, tail: int) -> dict:
    """Ask for the logits of the last ``tail`` positions only, when the model can."""
    return {lm.logits_keyword: max(1, tail)} if lm.logits_keyword else {}


def forward_tail(
    lm: LoadedModel, sequences: list[list[int]], tail: int = 1, layer: int | None = None
):
    """One batched forward; returns (logits (B, tail, V) of each sequence's last ``tail``
    positions, hidden (B, d) at the last token or None). ``layer`` indexes
    ``hidden_states`` (-1 = final layer output, 0 = embeddings); None skips them."""
    import torch

    if any(len(s) == 0 for s in sequences):
        raise ValueError("empty sequence")
    ids, mask, positions = left_pad(sequences, lm.pad_id, lm.device)
    kwargs: dict = {"attention_mask": mask, "output_hidden_states": layer is not None}
    if lm.accepts_position_ids:
        kwargs["position_ids"] = positions
    with torch.inference_mode():
        out = lm.model(ids, use_cache=False, **kwargs, **tail_kwargs(lm, tail))
    logits = out.logits[:, -tail:, :].float()  # (B, tail, V)
    hidden = None if layer is None else out.hidden_states[layer][:, -1, :].float()  # (B, d)
    return logits, hidden


def forward_last(lm: LoadedModel, sequences: list[list[int]], layer: int | None = -1):
    """(logits (B, V), hidden (B, d) or None) at the last token of each sequence."""
    logits, hidden = forward_tail(lm, sequences, 1, layer)
    return logits[:, -1, :], hidden


def cache_to_tensors(cache) -> list[tuple[Any, Any]]:
    """[(keys, values)] per layer, each (B, H, T, D), from a cache of any version."""
    if hasattr(cache, "layers"):  # transformers >= 4.56
        return [(layer.keys, layer.values) for layer in cache.layers]
    if hasattr(cache, "key_cache"):  # 4.36 - 4.55
        return list(zip(cache.key_cache, cache.value_cache, strict=True))
    return [(k, v) for k, v in cache]  # legacy tuples


def tensors_to_cache(tensors: list[tuple[Any, Any]]):
    from transformers import DynamicCache

    cache = DynamicCache()
    for layer_idx, (keys, values) in enumerate(tensors):
        cache.update(keys, values, layer_idx)
    return cache


def output_cache(out):
    """The returned cache of a forward, whatever the version calls it."""
    for key in ("cache", "past_key_values"):
        value = out.get(key) if hasattr(out, "get") else getattr(out, key, None)
        if value is not None:
            return value
    raise RuntimeError("the model returned no key/value cache")
