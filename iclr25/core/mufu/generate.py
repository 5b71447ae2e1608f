"""Greedy, batched translation with local models (teachers and students).

- causal LM: the prompt (left-padded, so every row ends where generation starts), the
  answer read until the end-of-sequence token or a newline;
- seq2seq LM (NLLB / M2M style): the source sentence as encoder input and the target
  language's token forced as the decoder's first token (``forced_bos_token_id``).

Prompts are grouped by length (fewer pad tokens) and the outputs returned in input
order; a batch gives the same outputs as one prompt at a time (tested). A prompt that
does not fit the model's positions is an input error naming its length.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from iclr25.core.mufu.models import Loaded
from iclr25.core.mufu.sft import eos_id
from iclr25.errors import InputError


def _stop_ids(tokenizer) -> list[int]:
    stops = {eos_id(tokenizer)}
    newline = tokenizer("\n", add_special_tokens=False)["input_ids"]
    if len(newline) == 1:
        stops.add(int(newline[0]))
    return sorted(stops)


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0].strip()


def check_lengths(
    loaded: Loaded, lengths: Sequence[int], max_new_tokens: int, k: int | None
) -> None:
    """An input error when the longest prompt plus the answer exceeds the model's positions."""
    limit = loaded.max_positions
    if limit is None or not lengths:
        return
    longest = max(lengths)
    if longest + max_new_tokens > limit:
        hint = f"use a smaller --k (now {k})" if k else "use shorter inputs"
        raise InputError(
            f"a prompt of {longest} tokens plus {max_new_tokens} new tokens exceeds the "
            f"model's {limit} positions",
            f"{hint} or a lower --max-new-tokens",
        )


def _batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    return [order[s : s + batch_size] for s in range(0, len(order), batch_size)]


def generate_causal(
    loaded: Loaded,
    prompts: Sequence[str],
    *,
    max_new_tokens: int = 64,
    batch_size: int = 64,
    k: int | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> list[str]:
    """Greedy continuations of ``prompts`` (first line, stripped), in input order."""
    import torch

    tok, model = loaded.tokenizer, loaded.model
    encoded = tok(list(prompts))["input_ids"]
    check_lengths(loaded, [len(e) for e in encoded], max_new_tokens, k)
    outputs: list[str] = [""] * len(prompts)
    pad = tok.pad_token_id
    stops = _stop_ids(tok)
    for index in _batches([len(e) for e in encoded], batch_size):
        rows = [encoded[i] for i in index]
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), pad, dtype=torch.long)  # (B, T) left-padded
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for b, r in enumerate(rows):
            ids[b, width - len(r) :] = torch.tensor(r)
            mask[b, width - len(r) :] = 1
        with torch.no_grad():
            out = model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                num_beams=1,
                eos_token_id=stops,
                pad_token_id=pad,
            )
        new = out[:, width:]  # (B, <= max_new_tokens)
        for b, i in enumerate(index):
            outputs[i] = _first_line(tok.decode(new[b], skip_special_tokens=True))
        if on_batch is not None:
            on_batch(len(index))
    return outputs


def lang_token_id(tokenizer, code: str) -> int:
    """The id of a seq2seq teacher's target-language token (``fra_Latn``, ``__fr__``, ...)."""
    vocab = tokenizer.get_vocab()
    for candidate in (code, f"__{code}__", f"<{code}>", f"<2{code}>", f"[{code}]"):
        if candidate in vocab:
            return int(vocab[candidate])
    raise InputError(
        f"the teacher's tokenizer has no token for language {code!r}",
        "use the teacher's own language codes (e.g. fra_Latn for NLLB, fr for M2M)",
    )


def generate_seq2seq(
    loaded: Loaded,
    sources: Sequence[str],
    target_lang: str,
    *,
    max_new_tokens: int = 64,
    batch_size: int = 64,
    on_batch: Callable[[int], None] | None = None,
) -> list[str]:
    """Greedy translations of ``sources`` into ``target_lang`` (its token forced first)."""
    import torch

    tok, model = loaded.tokenizer, loaded.model
    forced = lang_token_id(tok, target_lang)
    encoded = tok(list(sources))["input_ids"]
    check_lengths(loaded, [len(e) for e in encoded], 0, None)
    outputs: list[str] = [""] * len(sources)
    for index in _batches([len(e) for e in encoded], batch_size):
        batch = tok([sources[i] for i in index], return_tensors="pt", padding=True)
        with torch.no_grad():
            out = model.generate(
                **batch,
                forced_bos_token_id=forced,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                num_beams=1,
            )
        for b, i in enumerate(index):
            outputs[i] = _first_line(tok.decode(out[b], skip_special_tokens=True))
        if on_batch is not None:
            on_batch(len(index))
    return outputs
