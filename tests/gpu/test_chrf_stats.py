"""chrF statistics kernels: CPU paths against the definition here; the CUDA kernels against
the same definition on a device (``gpu`` marker). The step-by-step emulation of one CUDA
block is tested in tests/core/mufu/test_chrf.py."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.gpu.kernels.chrf_stats import (
    MAX_CAPACITY,
    bootstrap_sums,
    bootstrap_sums_cpu,
    bootstrap_sums_reference,
    match_counts,
    match_counts_reference,
)


def _pairs(n: int, max_len: int, alphabet: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    hl = rng.integers(0, max_len + 1, size=n)
    rl = rng.integers(0, max_len + 1, size=n)
    h = rng.integers(1, alphabet + 1, size=int(hl.sum()))
    r = rng.integers(1, alphabet + 1, size=int(rl.sum()))
    return h, hl, r, rl


@pytest.mark.parametrize(
    "n_res,n,s,top",
    [
        (0, 5, 3, 400),
        (7, 1, 18, 400),
        (50, 300, 24, 400),  # float32 products, a partial last block
        (3, 2000, 8, 400),
        (33, 2000, 6, 2**14),  # sums up to 2^25: float64 products
        (5, 40, 4, 2**50),  # beyond 2^53: the definition
    ],
)
def test_bootstrap_sums_cpu_equal_the_gather(n_res, n, s, top):
    rng = np.random.default_rng(n + s)
    stats = rng.integers(0, top, size=(n, s))
    stats[0] = top - 1  # the bound is reached by a drawn row
    idx = rng.integers(0, n, size=(n_res, n))
    assert np.array_equal(bootstrap_sums_cpu(stats, idx), bootstrap_sums_reference(stats, idx))


@pytest.mark.gpu
@pytest.mark.parametrize("orders", [1, 2, 6])
@pytest.mark.parametrize("max_len,alphabet", [(0, 3), (5, 3), (60, 30), (400, 5000), (1200, 50)])
def test_kernel_match_counts_equal_the_definition(orders, max_len, alphabet):
    """Short and empty rows, every capacity class, rows with > 1023 distinct symbols and
    rows longer than MAX_CAPACITY (both sent back to the CPU path)."""
    h, hl, r, rl = _pairs(300, max_len, alphabet, seed=orders)
    m, c = match_counts(h, hl, r, rl, orders, covered=True, device="cuda")
    mr, cr = match_counts_reference(h, hl, r, rl, orders, covered=True)
    assert np.array_equal(m, mr) and np.array_equal(c, cr)
    assert (
        max_len < MAX_CAPACITY // 2 or (hl + rl).max() > MAX_CAPACITY - 10
    )  # the long case is long


@pytest.mark.gpu
def test_kernel_statistics_equal_sacrebleu():
    from iclr25.core.mufu.chrf import ChrfParams, segment_statistics

    rng = np.random.default_rng(0)
    words = ["kami", "tulo", "ba", "ré", "नमस्ते", "今天", "Hello,", "world!"]
    hyps = [" ".join(rng.choice(words, size=rng.integers(0, 12))) for _ in range(500)]
    refs = [" ".join(rng.choice(words, size=rng.integers(0, 12))) for _ in range(500)]
    for params in (ChrfParams(), ChrfParams(word_order=2)):
        cuda = segment_statistics(hyps, refs, params, device="cuda")
        sacre = np.array(params.metric()._extract_corpus_statistics(hyps, [refs]), dtype=np.int64)
        assert np.array_equal(cuda, sacre)


@pytest.mark.gpu
@pytest.mark.parametrize("n_res,n,s", [(1, 1, 1), (1000, 2000, 18), (37, 513, 24), (5, 10, 33)])
def test_kernel_bootstrap_sums(n_res, n, s):
    rng = np.random.default_rng(n)
    stats = rng.integers(0, 400, size=(n, s))
    idx = rng.integers(0, n, size=(n_res, n))
    assert np.array_equal(
        bootstrap_sums(stats, idx, device="cuda"), bootstrap_sums_reference(stats, idx)
    )
