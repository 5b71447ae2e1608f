"""The self-adaptive ICL criterion and the naive (one forward per prompt) scorer.

Self-adaptive ICL (Wu, Wang, Ye, Kong, ACL 2023, Sec. 3.2, the "MDL"/entropy ranking):
for a candidate organisation ``c`` of demonstrations and a test input ``x``,

    p(y | c, x) ∝ exp(-CE(y | c, x))         for every label y
    H(c, x) = -Σ_y p(y | c, x) log p(y | c, x)

and the organisation with the lowest entropy H (the one under which the model is most
confident) is chosen; the prediction is then argmax_y p(y | c, x).

Symbols in code: ``label_logits`` -> the model's logits of the label tokens at the last
prompt position (so CE(y) = -log softmax(logits)[y] and p(y) ∝ exp(-CE(y)) is the softmax
restricted to the label tokens); ``entropy`` -> H(c, x). Labels are single tokens (see
``prompts.py``), so the averaged cross-entropy of the paper is that one token's.
Calibration by a content-free input (optional in the original) is not applied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from iclr25.core.icl_order.models import LoadedModel, forward_last
from iclr25.core.icl_order.prompts import EncodedTask


def label_distribution(label_logits: np.ndarray) -> np.ndarray:
    """p(y | c, x): softmax over the last axis of (..., n_labels) logits."""
    shifted = label_logits - label_logits.max(axis=-1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=-1, keepdims=True)


def entropy(label_logits: np.ndarray) -> np.ndarray:
    """H(c, x) in nats for every leading index of (..., n_labels) logits."""
    shifted = label_logits - label_logits.max(axis=-1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    log_p = shifted - log_z
    return -(np.exp(log_p) * log_p).sum(axis=-1)


def score_naive(
    lm: LoadedModel,
    encoded: EncodedTask,
    orderings: Sequence[tuple[int, ...]],
    queries: Sequence[int],
    on_batch: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Label logits (n_orderings, n_queries, n_labels), one full forward per prompt."""
    prompts = [encoded.prompt(order, q) for order in orderings for q in queries]
    label_ids = encoded.label_ids
    out = np.empty((len(prompts), len(label_ids)), dtype=np.float64)
    for start in range(0, len(prompts), lm.batch_size):
        batch = prompts[start : start + lm.batch_size]
        logits, _ = forward_last(lm, batch, layer=None)
        out[start : start + len(batch)] = logits[:, label_ids].cpu().numpy()
        if on_batch is not None:
            on_batch(len(batch))
    return out.reshape(len(orderings), len(queries), len(label_ids))  # (O, Q, L)
