"""Prompt embeddings: the last token's hidden state of every ordering of k demonstrations.

Paper (Pham et al., ICLR 2025, Sec. 3): the embedding of a prompt is the final-layer
hidden state of its last token — the vector a decoder-only model maps to its next-token
distribution. ``layer`` indexes transformers' ``hidden_states`` tuple: -1 is the last
entry (for GPT-2 that is after the final layer norm, i.e. exactly what the LM head sees),
0 the token embeddings.

Orderings: all k! permutations of the k demonstrations, or, above ``max_orderings``, a
seeded sample of that many distinct permutations (only when ``sample`` is set; otherwise
the caller is told to opt in).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np

from iclr25.core.icl_order.models import LoadedModel, forward_last
from iclr25.core.icl_order.prompts import EncodedTask
from iclr25.errors import UsageError


def format_count(n: float) -> str:
    """``40,320``; huge counts in scientific notation (``2.43e+18``)."""
    return f"{n:,}" if n < 1e12 else f"{float(n):.3g}"


def all_orderings(k: int, max_orderings: int, sample: bool, rng: np.random.Generator):
    """Permutations of range(k): all k! (lexicographic) or a seeded sample of
    ``max_orderings`` distinct ones when k! is larger and ``sample`` is set."""
    total = math.factorial(k) if k <= 20 else math.inf  # 20! > 2e18 exceeds any cap
    if total <= max_orderings:
        return list(itertools.permutations(range(k)))
    if not sample:
        count = format_count(math.factorial(k)) if k <= 170 else "more than 1e306"
        raise UsageError(
            f"k={k} gives {count} orderings, above --max-orderings {max_orderings:,}",
            f"pass --sample to embed a seeded sample of {max_orderings:,}, "
            "or raise --max-orderings",
        )
    seen: set[tuple[int, ...]] = set()
    while len(seen) < max_orderings:
        seen.add(tuple(int(i) for i in rng.permutation(k)))
    return sorted(seen)


def embed_prompts(
    lm: LoadedModel,
    prompts: Sequence[list[int]],
    layer: int = -1,
    on_batch: Callable[[int], None] | None = None,
) -> np.ndarray:
    """(N, d) float32: the hidden state at ``layer`` of each prompt's last token."""
    if not -(lm.n_layers + 1) <= layer <= lm.n_layers:
        raise UsageError(
            f"--layer {layer} is outside the model's {lm.n_layers} layers",
            f"use -1 (final) or a value from {-(lm.n_layers + 1)} to {lm.n_layers}",
        )
    rows = []
    for start in range(0, len(prompts), lm.batch_size):
        batch = list(prompts[start : start + lm.batch_size])
        _, hidden = forward_last(lm, batch, layer=layer)
        rows.append(hidden.cpu().numpy().astype(np.float32))
        if on_batch is not None:
            on_batch(len(batch))
    return np.concatenate(rows) if rows else np.zeros((0, 0), dtype=np.float32)


def embed_orderings(
    lm: LoadedModel,
    encoded: EncodedTask,
    demos: Sequence[int],
    query: int,
    orderings: Sequence[tuple[int, ...]],
    layer: int = -1,
    on_batch: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Embeddings (len(orderings), d) of the prompts ``demos`` permuted by each ordering."""
    prompts = [encoded.prompt(tuple(demos[i] for i in order), query) for order in orderings]
    return embed_prompts(lm, prompts, layer, on_batch)
