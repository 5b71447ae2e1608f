"""Supervised examples for a causal LM: a prompt, then its answer, loss on the answer only.

The paper's objective (our notation): θ* = argmin_θ − Σ_{(x, y_t)} log p_θ(y_t | P(x)),
the sum over the target tokens y_t only. :func:`encode` builds ``labels`` equal to the
token ids on the answer (and its end-of-sequence token) and ``-100`` on the prompt and
padding, so the model's cross-entropy (``labels`` shifted inside the model) ignores
every prompt position: prompt tokens receive no loss (tested by a gradient test).

The answer is tokenized on its own, after one space (``" " + y_t``), and appended to the
prompt's tokens: the same split :mod:`iclr25.core.mufu.generate` decodes from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

IGNORE = -100


@dataclass
class Encoded:
    input_ids: list[list[int]]  # prompt ids + answer ids + eos, per example
    prompt_lengths: list[int]

    def __len__(self) -> int:
        return len(self.input_ids)

    def tokens(self) -> int:
        return sum(len(ids) for ids in self.input_ids)

    def answer_tokens(self) -> int:
        return sum(len(ids) - p for ids, p in zip(self.input_ids, self.prompt_lengths, strict=True))


def eos_id(tokenizer) -> int:
    if tokenizer.eos_token_id is not None:
        return int(tokenizer.eos_token_id)
    newline = tokenizer("\n", add_special_tokens=False)["input_ids"]
    return int(newline[-1])


def encode(tokenizer, prompts: Sequence[str], answers: Sequence[str]) -> Encoded:
    """Token ids of ``prompt + " " + answer + eos`` and the prompt lengths."""
    p_ids = tokenizer(list(prompts))["input_ids"]
    a_ids = tokenizer([" " + a for a in answers], add_special_tokens=False)["input_ids"]
    eos = eos_id(tokenizer)
    rows = [p + a + [eos] for p, a in zip(p_ids, a_ids, strict=True)]
    return Encoded(rows, [len(p) for p in p_ids])


def collate(encoded: Encoded, index: Sequence[int], pad_id: int):
    """Right-padded ``(input_ids, attention_mask, labels)`` tensors (B, T) for ``index``."""
    import torch

    rows = [encoded.input_ids[i] for i in index]
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), IGNORE, dtype=torch.long)
    for b, i in enumerate(index):
        row, p = encoded.input_ids[i], encoded.prompt_lengths[i]
        ids[b, : len(row)] = torch.tensor(row)
        mask[b, : len(row)] = 1
        labels[b, p : len(row)] = torch.tensor(row[p:])
    return ids, mask, labels


def loss(model, ids, mask, labels, reduction: str = "mean"):
    """Cross-entropy over answer tokens (``"mean"`` or ``"sum"``); logits at t predict t+1.

    For a decoder with a separate output layer (GPT-2 and the like, LoRA-wrapped or not)
    the output layer runs on the answer positions only: with prompts 3-10 times longer
    than answers, the vocabulary projection and softmax of every prompt position was a
    fifth to a third of a training step. Other models (seq2seq) go through their own loss.
    Equal to ``model(..., labels=labels).loss`` (tested).
    """
    import torch.nn.functional as F

    split = _body_and_head(model)
    if split is None:
        out = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        return out if reduction == "mean" else out * int((labels[:, 1:] != IGNORE).sum())
    body, head = split
    hidden = body(input_ids=ids, attention_mask=mask).last_hidden_state  # (B, T, D)
    target = labels[:, 1:]  # (B, T-1): the token each position predicts
    keep = target != IGNORE
    logits = head(hidden[:, :-1][keep])  # (N, V), N answer positions
    return F.cross_entropy(logits.float(), target[keep], reduction=reduction)


def _body_and_head(model):
    """(transformer body, output layer) of a decoder-only LM, unwrapping peft; else None."""
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    config = getattr(inner, "config", None)
    if config is None or getattr(config, "is_encoder_decoder", False):
        return None
    body = getattr(inner, getattr(inner, "base_model_prefix", ""), None)
    head = inner.get_output_embeddings() if hasattr(inner, "get_output_embeddings") else None
    if body is None or head is None or body is inner:
        return None
    return body, head


def length_groups(encoded: Encoded, index: Sequence[int], groups: int) -> list[list[int]]:
    """``index`` sorted by length and cut into ``groups`` runs of near-equal size: collated
    separately, each run pads to its own longest row instead of the batch's."""
    order = sorted(index, key=lambda i: len(encoded.input_ids[i]))
    groups = max(1, min(groups, len(order)))
    bounds = [round(g * len(order) / groups) for g in range(groups + 1)]
    return [order[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]
