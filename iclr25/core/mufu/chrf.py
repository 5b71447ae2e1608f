"""chrF / chrF++ segment statistics equal to sacrebleu's integers, computed for many pairs.

sacrebleu (Popović 2015, 2017) is the scoring authority: a segment's statistics are,
per order (``char_order`` character orders, then ``word_order`` word orders), the
triple [hypothesis n-grams, reference n-grams, matched n-grams], where

- characters are taken after ``"".join(line.split())`` (no whitespace; sacrebleu's
  ``whitespace=False``), after sacrebleu's own lower-casing when ``lowercase``;
- words are sacrebleu's own ``_remove_punctuation`` tokens;
- matched = Σ_g min(H(g), R(g)), and the hypothesis count is 0 for an order whose
  reference has no n-gram (sacrebleu's rule: ``hyp_count if ref_ngrams else 0``).

:func:`segment_statistics` computes them for all pairs at once (symbols numbered
densely, n-grams counted by the vectorised engine of
:mod:`iclr25.gpu.kernels.chrf_stats`, or its CUDA kernel with ``device="cuda"``); every
score is then sacrebleu's own ``_compute_score_from_stats`` on these statistics, so a
corpus chrF here is the number sacrebleu prints. Single reference per segment.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ChrfParams:
    """sacrebleu ``CHRF`` arguments (defaults: chrF2, character 6-grams)."""

    char_order: int = 6
    word_order: int = 0  # 2 = chrF++
    beta: int = 2
    lowercase: bool = False
    whitespace: bool = False
    eps_smoothing: bool = False

    @property
    def orders(self) -> int:
        return self.char_order + self.word_order

    def metric(self):
        return _metric(self)

    def plus_plus(self) -> ChrfParams:
        return ChrfParams(
            self.char_order, 2, self.beta, self.lowercase, self.whitespace, self.eps_smoothing
        )


SACREBLEU_HINT = "install the extra: pip install 'iclr25[mufu]' (it brings sacrebleu)"


def _sacrebleu_chrf():
    """sacrebleu's CHRF class; a usage error naming the extra when it is not installed."""
    try:
        from sacrebleu.metrics import CHRF
    except ImportError:
        from iclr25.errors import UsageError

        raise UsageError(
            "mufu scores with sacrebleu, which is not installed", SACREBLEU_HINT
        ) from None
    return CHRF


@functools.lru_cache(maxsize=16)
def _metric(params: ChrfParams):
    CHRF = _sacrebleu_chrf()  # noqa: N806

    return CHRF(
        char_order=params.char_order,
        word_order=params.word_order,
        beta=params.beta,
        lowercase=params.lowercase,
        whitespace=params.whitespace,
        eps_smoothing=params.eps_smoothing,
    )


# ---------------------------------------------------------------------------------------
# Strings -> symbols
# ---------------------------------------------------------------------------------------
def _code_points(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(flat code points int64, lengths) of ``strings`` (lone surrogates kept)."""
    lengths = np.fromiter((len(s) for s in strings), dtype=np.int64, count=len(strings))
    if lengths.sum() == 0:
        return np.zeros(0, dtype=np.int64), lengths
    data = "".join(strings).encode("utf-32-le", "surrogatepass")
    return np.frombuffer(data, dtype=np.uint32).astype(np.int64), lengths


# What ``str.split()`` splits on (``str.isspace``); tests/core/mufu/test_chrf.py checks
# this against every code point of the running Python.
WHITESPACE = (
    *range(0x09, 0x0E), *range(0x1C, 0x21), 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
    0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
)  # fmt: skip
_IS_SPACE = np.zeros(max(WHITESPACE) + 1, dtype=bool)
_IS_SPACE[list(WHITESPACE)] = True


def char_symbols(strings: Sequence[str], params: ChrfParams) -> tuple[np.ndarray, np.ndarray]:
    """Characters as sacrebleu's ``extract_all_char_ngrams`` sees them; code point + 1.

    sacrebleu's own lower-casing (``_preprocess_segment``) when ``lowercase``; its
    ``"".join(line.split())`` (``whitespace=False``) as one vectorised step: the code
    points of all lines at once, minus those in :data:`WHITESPACE`."""
    if params.lowercase:
        metric = params.metric()
        strings = [metric._preprocess_segment(s) for s in strings]
    flat, lengths = _code_points(strings)
    if not params.whitespace and flat.size:
        space = _IS_SPACE[np.minimum(flat, len(_IS_SPACE) - 1)] & (flat < len(_IS_SPACE))
        if space.any():
            row = np.repeat(np.arange(len(lengths)), lengths)
            lengths = lengths - np.bincount(row[space], minlength=len(lengths))
            flat = flat[~space]
    return flat + 1, lengths


def word_symbols(
    strings: Sequence[str], params: ChrfParams, vocab: dict
) -> tuple[np.ndarray, np.ndarray]:
    """sacrebleu's chrF++ word tokens, numbered through ``vocab`` (shared by hyp and ref)."""
    metric = params.metric()
    ids: list[int] = []
    lengths = np.zeros(len(strings), dtype=np.int64)
    for i, s in enumerate(strings):
        words = metric._remove_punctuation(metric._preprocess_segment(s))
        lengths[i] = len(words)
        ids.extend(vocab.setdefault(w, len(vocab) + 1) for w in words)
    return np.asarray(ids, dtype=np.int64), lengths


# ---------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------
def _order_counts(lengths: np.ndarray, orders: int) -> np.ndarray:
    """(n, orders) number of n-grams of sequences of these lengths."""
    n = np.arange(1, orders + 1)[None, :]
    return np.maximum(lengths[:, None] - n + 1, 0)


def _block(hyp, hyp_len, ref, ref_len, orders: int, device: str) -> np.ndarray:
    """(n, 3*orders) [hyp, ref, match] per order for one kind of symbol."""
    from iclr25.gpu.kernels.chrf_stats import match_counts

    match = match_counts(hyp, hyp_len, ref, ref_len, orders, device=device)
    ref_n = _order_counts(ref_len, orders)
    hyp_n = np.where(ref_n > 0, _order_counts(hyp_len, orders), 0)  # sacrebleu's rule
    out = np.empty((len(hyp_len), 3 * orders), dtype=np.int64)
    out[:, 0::3], out[:, 1::3], out[:, 2::3] = hyp_n, ref_n, match
    return out


def segment_statistics(
    hyps: Sequence[str], refs: Sequence[str], params: ChrfParams = ChrfParams(), device: str = "cpu"
) -> np.ndarray:
    """(n, 3 * orders) int64: sacrebleu's per-segment chrF statistics (module docstring)."""
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    h, hl = char_symbols(hyps, params)
    r, rl = char_symbols(refs, params)
    parts = [_block(h, hl, r, rl, params.char_order, device)]
    if params.word_order:
        vocab: dict[str, int] = {}
        hw, hwl = word_symbols(hyps, params, vocab)
        rw, rwl = word_symbols(refs, params, vocab)
        parts.append(_block(hw, hwl, rw, rwl, params.word_order, device))
    return np.concatenate(parts, axis=1)


def score(stats: np.ndarray, params: ChrfParams = ChrfParams()) -> float:
    """The chrF of summed statistics, by sacrebleu's own ``_compute_score_from_stats``."""
    totals = np.asarray(stats).sum(axis=0) if np.ndim(stats) == 2 else np.asarray(stats)
    return float(params.metric()._compute_score_from_stats(totals.tolist()).score)


def sentence_scores(stats: np.ndarray, params: ChrfParams = ChrfParams()) -> np.ndarray:
    """Per-segment chrF, each by sacrebleu's function (sacrebleu's ``sentence_score``)."""
    compute = params.metric()._compute_score_from_stats
    return np.array([compute(row).score for row in np.asarray(stats).tolist()], dtype=np.float64)


def signature(params: ChrfParams = ChrfParams()) -> str:
    """sacrebleu's reproducibility signature, e.g. ``nrefs:1|case:mixed|eff:yes|nc:6|...``."""
    metric = _sacrebleu_chrf()(**{k: getattr(params, k) for k in params.__dataclass_fields__})
    metric.num_refs = 1  # what scoring one reference per segment sets
    return metric.get_signature().format()
