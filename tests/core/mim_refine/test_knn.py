"""k-NN protocol of mim-refine: a hand-computed case, a float64 transcription, top-k."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iclr25.core.mim_refine.knn import (
    GROUP,
    KnnConfig,
    check_feature_pair,
    knn_predict,
    standardise,
    topk_cosine_cpu,
    topk_rows,
    topk_rows_sorted,
    vote,
)
from iclr25.errors import InputError, UsageError
from iclr25.testing import assert_close

# Bank: the four unit axis directions of the plane. Its mean is 0 and both dimensions have
# the same unbiased std (sqrt(2/3)), so standardising keeps every direction.
BANK = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, -1.0], [-1.0, 0.0]])
QUERY = np.array([[1.0, 0.5]])  # cosines: 2/√5 = 0.894, 1/√5 = 0.447, −0.447, −0.894


def test_hand_computed_case_weighting_decides_against_the_majority():
    labels = np.array([0, 1, 1, 1])
    # k = 3 → neighbours (0.894, class 0), (0.447, class 1), (−0.447, class 1)
    # τ = 1:  class 0 e^0.894 = 2.445 > class 1 e^0.447 + e^−0.447 = 1.564 + 0.639 = 2.203
    assert knn_predict(BANK, labels, QUERY, KnnConfig(k=3, tau=1.0))[0] == 0
    # τ = 10: class 0 e^0.0894 = 1.094 < class 1 e^0.0447 + e^−0.0447 = 2.002
    assert knn_predict(BANK, labels, QUERY, KnnConfig(k=3, tau=10.0))[0] == 1
    # k = 1: the nearest alone
    assert knn_predict(BANK, np.array([2, 1, 1, 1]), QUERY, KnnConfig(k=1))[0] == 2


def test_tie_between_classes_goes_to_the_smaller_class_id():
    query = np.array([[1.0, 1.0]])  # equal cosine 0.707 to (1, 0) and (0, 1)
    for labels in ([0, 1, 2, 2], [1, 0, 2, 2]):
        assert knn_predict(BANK, np.array(labels), query, KnnConfig(k=2))[0] == 0


def repo_knn_float64(train_x, train_y, test_x, k, tau):
    """Transcription of src/metrics/knn.py (MIM-Refiner), one query at a time, float64."""
    train_x, test_x = train_x.astype(np.float64), test_x.astype(np.float64)
    mean = train_x.mean(axis=0, keepdims=True)
    std = train_x.std(axis=0, ddof=1, keepdims=True) + 1e-6
    train_x, test_x = (train_x - mean) / std, (test_x - mean) / std
    train_x /= np.linalg.norm(train_x, axis=1, keepdims=True)
    test_x /= np.linalg.norm(test_x, axis=1, keepdims=True)
    n_classes = train_y.max() + 1
    preds = []
    for q in test_x:
        sims = train_x @ q
        top = np.argsort(-sims, kind="stable")[:k]
        scores = np.zeros(n_classes)
        for j in top:
            scores[train_y[j]] += math.exp(sims[j] / tau)
        preds.append(int(np.argmax(scores)))
    return np.array(preds)


@pytest.mark.parametrize(("k", "tau"), [(1, 0.07), (10, 0.07), (7, 0.5)])
def test_matches_a_float64_transcription_of_the_repository_formula(k, tau):
    rng = np.random.default_rng(k)
    train_x = rng.normal(size=(300, 16)) * rng.uniform(0.1, 5, size=16) + rng.normal(size=16)
    train_y = rng.integers(0, 5, size=300)
    train_x[np.arange(300), train_y] += 1.5  # some class signal
    test_x = rng.normal(size=(120, 16)) * 2
    ours = knn_predict(train_x, train_y, test_x, KnnConfig(k, tau, chunk=50))
    np.testing.assert_array_equal(ours, repo_knn_float64(train_x, train_y, test_x, k, tau))


def test_fast_path_matches_the_float64_transcription_on_a_bank_past_the_group_cut():
    """A bank large enough (≥ 2·k·GROUP rows) for the group pre-selection of topk_rows."""
    rng = np.random.default_rng(11)
    n = 2 * 10 * GROUP + 37  # a partial last group too
    train_x = rng.normal(size=(n, 24)) * rng.uniform(0.2, 3, size=24)
    train_y = rng.integers(0, 7, size=n)
    train_x[np.arange(n), train_y] += 2.0
    test_x = rng.normal(size=(150, 24)) * 1.5
    ours = knn_predict(train_x, train_y, test_x, KnnConfig(10, 0.07, chunk=64))
    np.testing.assert_array_equal(ours, repo_knn_float64(train_x, train_y, test_x, 10, 0.07))


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 9),
    cols=st.integers(1, 3 * 2 * 8 * GROUP),
    k=st.integers(1, 8),
    levels=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_topk_rows_equals_a_stable_full_sort_even_with_many_ties(rows, cols, k, levels, seed):
    """Scores from a handful of levels: ties everywhere, the answer is still (value desc,
    column asc); shapes below, at and past the group cut, with and without a tail."""
    k = min(k, cols)
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, levels, size=(rows, cols)).astype(np.float32)
    vals, index = topk_rows(scores, k)
    want_vals, want_index = topk_rows_sorted(scores, k)
    np.testing.assert_array_equal(index, want_index)
    np.testing.assert_array_equal(vals, want_vals)
    order = np.lexsort((np.arange(cols)[None].repeat(rows, 0), -scores), axis=1)[:, :k]
    np.testing.assert_array_equal(index, order)  # the definition, independently of both


def test_topk_rows_puts_nan_last():
    scores = np.zeros((2, 4 * 2 * GROUP), dtype=np.float32)
    scores[0, 5], scores[0, 9], scores[1, 3] = np.nan, 2.0, 1.0
    vals, index = topk_rows(scores, 3)
    np.testing.assert_array_equal(index, [[9, 0, 1], [3, 0, 1]])
    assert not np.isnan(vals).any()


def test_vote_against_a_loop_and_its_tie_rule():
    rng = np.random.default_rng(5)
    sims = rng.uniform(-1, 1, size=(40, 6)).astype(np.float32)
    labels = rng.integers(0, 4, size=(40, 6))
    want = []
    for s, y in zip(sims, labels, strict=True):
        scores = np.zeros(4)
        for v, c in zip(s, y, strict=True):
            scores[c] += math.exp(float(v) / 0.1)
        want.append(int(np.argmax(scores)))
    np.testing.assert_array_equal(vote(sims, labels, 4, 0.1), want)
    # equal weights on classes 3 and 1 → the smaller id; an unused class 0 scores 0
    assert vote(np.array([[0.5, 0.5]]), np.array([[3, 1]]), 4, 0.07)[0] == 1


@pytest.mark.parametrize(
    ("n_bank", "n_query", "dim", "k", "chunk"),
    [(97, 13, 5, 6, 4), (1000, 23, 7, 10, 5)],  # 2nd: past the group cut, with a tail group
)
def test_topk_cosine_matches_a_full_sort_with_odd_chunks(n_bank, n_query, dim, k, chunk):
    rng = np.random.default_rng(3)
    bank, queries = standardise(rng.normal(size=(n_bank, dim)), rng.normal(size=(n_query, dim)))
    sims, index = topk_cosine_cpu(bank, queries, k=k, chunk=chunk)
    full = queries.astype(np.float64) @ bank.T.astype(np.float64)
    order = np.argsort(-full, axis=1)[:, :k]
    np.testing.assert_array_equal(index, order)
    assert_close(sims, np.take_along_axis(full, order, 1), rtol=1e-5, atol=1e-6)
    sims, index = topk_cosine_cpu(bank, queries[:0], k=3)  # no queries at all
    assert sims.shape == index.shape == (0, 3)


def test_bad_k_tau_and_feature_files_are_rejected():
    labels = np.array([0, 1, 1, 0])
    with pytest.raises(UsageError, match="outside 1..4"):
        knn_predict(BANK, labels, QUERY, KnnConfig(k=5))
    with pytest.raises(UsageError, match="must be > 0"):
        knn_predict(BANK, labels, QUERY, KnnConfig(k=1, tau=0.0))
    good = {"features": BANK, "labels": labels}
    with pytest.raises(InputError, match="no labels"):
        check_feature_pair({"features": BANK}, good)
    with pytest.raises(InputError, match="dimensions differ"):
        check_feature_pair(good, {"features": np.ones((2, 3)), "labels": np.array([0, 1])})
    with pytest.raises(InputError, match="NaN"):
        check_feature_pair(good, {"features": np.array([[np.nan, 0.0]]), "labels": np.array([0])})


def test_device_cpu_and_a_cuda_request_without_cupy_take_the_cpu_search():
    """``device="cuda"`` falls back to the CPU search where CuPy sees no device: same
    predictions (on a CPU machine this compares the fallback with the CPU path)."""
    from iclr25.gpu import get_cupy

    rng = np.random.default_rng(3)
    bank, queries = rng.normal(size=(300, 12)), rng.normal(size=(50, 12))
    labels = rng.integers(0, 5, 300)
    cpu = knn_predict(bank, labels, queries, KnnConfig(k=7))
    asked = knn_predict(bank, labels, queries, KnnConfig(k=7, device="cuda"))
    if get_cupy() is None:
        assert (asked == cpu).all()


@pytest.mark.gpu
def test_cuda_kernel_search_matches_the_cpu_protocol():
    from iclr25.core.mim_refine.knn import search

    rng = np.random.default_rng(4)
    bank, queries = rng.normal(size=(5000, 48)), rng.normal(size=(700, 48))
    labels = rng.integers(0, 10, 5000)
    bank_u, query_u = standardise(bank, queries)
    for k in (1, 10, 32):
        sims_g, idx_g = search(bank_u, query_u, k, KnnConfig(k=k, device="cuda"))
        sims_c, idx_c = topk_cosine_cpu(bank_u, query_u, k)
        assert idx_g.dtype == np.int64 and (idx_g == idx_c).mean() > 0.999
        assert_close(sims_g, sims_c, atol=1e-5)
        gpu = knn_predict(bank, labels, queries, KnnConfig(k=k, device="cuda"))
        cpu = knn_predict(bank, labels, queries, KnnConfig(k=k))
        assert (gpu == cpu).mean() > 0.999
