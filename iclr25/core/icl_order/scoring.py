"""The self-adaptive ICL criterion and the naive (one forward per prompt) scorer.

Self-adaptive ICL (Wu, Wang, Ye, Kong, ACL 2023, Sec. 3.2, the "MDL"/entropy ranking):
for a candidate organisation ``c`` of demonstrations and a test input ``x``,

    p(y | c, x) ∝ exp(-CE(y | c, x))         for every label y
    H(c, x) = -Σ_y p(y | c, x) log p(y | c, x)

and the organisation with the lowest entropy H (the one under which the model is most
confident) is chosen; the prediction is then argmax_y p(y | c, x).

Symbols in code: ``label_scores`` -> -CE(y | c, x), the mean log-probability (over the
full vocabulary) of label y's tokens after the prompt, so p(y | c, x) is the softmax of
the scores over the labels; ``entropy`` -> H(c, x). A single-token label's score is that
token's log-probability; a label word of several tokens is scored with its tokens
appended after the query (teacher forcing), one scoring row per label. Calibration by a
content-free input (optional in the original) is not applied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from iclr25.core.icl_order.models import LoadedModel, forward_tail
from iclr25.core.icl_order.prompts import EncodedTask


def label_distribution(label_scores: np.ndarray) -> np.ndarray:
    """p(y | c, x): softmax over the last axis of (..., n_labels) scores."""
    shifted = label_scores - label_scores.max(axis=-1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=-1, keepdims=True)


def entropy(label_scores: np.ndarray) -> np.ndarray:
    """H(c, x) in nats for every leading index of (..., n_labels) scores."""
    shifted = label_scores - label_scores.max(axis=-1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    log_p = shifted - log_z
    return -(np.exp(log_p) * log_p).sum(axis=-1)


@dataclass(frozen=True)
class ScoringRow:
    """What is appended after a prompt to score labels: ``label`` None with no tokens
    (every label is one token: one row scores them all), else that label's tokens but
    the last (its tokens are then read at the row's last ``len(label)`` positions)."""

    label: int | None
    suffix: tuple[int, ...]


def scoring_rows(encoded: EncodedTask) -> list[ScoringRow]:
    if encoded.single_token_labels:
        return [ScoringRow(None, ())]
    return [ScoringRow(i, tuple(t[:-1])) for i, t in enumerate(encoded.label_tokens)]


def tail_length(encoded: EncodedTask, rows: Sequence[ScoringRow]) -> int:
    """Positions whose logits the rows need (1 for single-token labels)."""
    return max(1 if r.label is None else len(encoded.label_tokens[r.label]) for r in rows)


def read_scores(logits, rows: Sequence[ScoringRow], encoded: EncodedTask) -> np.ndarray:
    """Label scores (B, n_labels) from the tail logits (B, m, V) of B scoring rows; a
    multi-token row fills only its label's column (the others are NaN)."""
    import torch

    log_p = torch.log_softmax(logits.float(), dim=-1)  # (B, m, V)
    m = log_p.shape[1]
    tokens = encoded.label_tokens
    out = np.full((len(rows), len(tokens)), np.nan)
    first = [t[0] for t in tokens]
    for b, row in enumerate(rows):
        if row.label is None:
            out[b] = log_p[b, -1, first].cpu().numpy()
            continue
        ids = tokens[row.label]
        steps = torch.arange(m - len(ids), m)
        out[b, row.label] = float(log_p[b, steps, ids].mean())
    return out


def merge_scores(out: np.ndarray, values: np.ndarray) -> None:
    """Copy the filled (non-NaN) entries of ``values`` into ``out`` (same shape)."""
    filled = ~np.isnan(values)
    out[filled] = values[filled]


def score_naive(
    lm: LoadedModel,
    encoded: EncodedTask,
    orderings: Sequence[tuple[int, ...]],
    queries: Sequence[int],
    on_batch: Callable[[float], None] | None = None,
) -> np.ndarray:
    """Label scores (n_orderings, n_queries, n_labels), one full forward per prompt."""
    rows = scoring_rows(encoded)
    jobs = [
        (o, j, row, encoded.prompt(tuple(order), q) + list(row.suffix))
        for o, order in enumerate(orderings)
        for j, q in enumerate(queries)
        for row in rows
    ]
    out = np.full((len(orderings), len(queries), len(encoded.label_tokens)), np.nan)
    for start in range(0, len(jobs), lm.batch_size):
        batch = jobs[start : start + lm.batch_size]
        batch_rows = [row for _, _, row, _ in batch]
        logits, _ = forward_tail(lm, [seq for *_, seq in batch], tail_length(encoded, batch_rows))
        values = read_scores(logits, batch_rows, encoded)  # (B, L)
        for (o, j, _, _), row_values in zip(batch, values, strict=True):
            merge_scores(out[o, j], row_values)
        if on_batch is not None:
            on_batch(len(batch) / len(rows))
    return out  # (O, Q, L)
