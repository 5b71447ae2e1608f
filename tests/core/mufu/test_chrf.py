"""chrF statistics: our vectorised engine against sacrebleu's integers and scores."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iclr25.core.mufu.chrf import ChrfParams, score, segment_statistics, sentence_scores, signature
from iclr25.gpu.kernels.chrf_stats.reference import (
    emulate_block,
    match_counts_cpu,
    match_counts_reference,
)

# (hypothesis, reference, sacrebleu 2.6.0 sentence chrF, chrF++, its 18 chrF statistics)
HAND_MADE = [
    (
        "the cat sat on the mat",
        "the cat is on the mat",
        64.5779420625287,
        66.36067072084818,
        [17, 16, 15, 16, 15, 12, 15, 14, 10, 14, 13, 8, 13, 12, 6, 12, 11, 4],
    ),
    (
        "kedeñu mépa",
        "kedeču mäpa",
        29.14021164021164,
        21.85515873015873,
        [10, 10, 8, 9, 9, 5, 8, 8, 2, 7, 7, 1, 6, 6, 0, 5, 5, 0],
    ),
    ("", "abc", 0.0, 0.0, [0, 3, 0, 0, 2, 0, 0, 1, 0] + [0] * 9),
    ("abc", "", 0.0, 0.0, [0] * 18),  # no reference n-gram: hypothesis counts are 0
    ("a b c", "abc", 100.0, 75.0, [3, 3, 3, 2, 2, 2, 1, 1, 1] + [0] * 9),
    (
        "Hello, world!",
        "hello world",
        46.123358414818775,
        39.998489705667986,
        [12, 10, 9, 11, 9, 7, 10, 8, 5, 9, 7, 3, 8, 6, 1, 7, 5, 0],
    ),
    (
        "नमस्ते दुनिया",
        "नमस्ते दुनिया",
        100.0,
        100.0,
        [12, 12, 12, 11, 11, 11, 10, 10, 10, 9, 9, 9, 8, 8, 8, 7, 7, 7],
    ),
    (
        "今天天气很好",
        "今天天气不错",
        35.0,
        30.0,
        [6, 6, 4, 5, 5, 3, 4, 4, 2, 3, 3, 1, 2, 2, 0, 1, 1, 0],
    ),
]
CORPUS_CHRF, CORPUS_CHRF_PP = 60.16440362230022, 57.52796834910669  # sacrebleu, all 8 pairs


def _sacrebleu_stats(hyps, refs, params: ChrfParams) -> np.ndarray:
    stats = params.metric()._extract_corpus_statistics(list(hyps), [list(refs)])
    return np.array(stats, dtype=np.int64).reshape(len(hyps), 3 * params.orders)


@pytest.mark.parametrize("case", HAND_MADE, ids=lambda c: repr(c[0])[:20])
def test_hand_made_pairs(case):
    hyp, ref, chrf, chrf_pp, stats = case
    ours = segment_statistics([hyp], [ref])
    assert ours[0].tolist() == stats
    assert sentence_scores(ours)[0] == chrf
    pp = ChrfParams(word_order=2)
    assert score(segment_statistics([hyp], [ref], pp), pp) == chrf_pp


def test_hand_made_corpus():
    hyps, refs = [c[0] for c in HAND_MADE], [c[1] for c in HAND_MADE]
    assert score(segment_statistics(hyps, refs)) == CORPUS_CHRF
    pp = ChrfParams(word_order=2)
    assert score(segment_statistics(hyps, refs, pp), pp) == CORPUS_CHRF_PP


def test_signature_is_sacrebleus():
    assert signature() == "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:" + _version()
    assert "nw:2" in signature(ChrfParams(word_order=2))


def _version() -> str:
    import sacrebleu

    return sacrebleu.__version__


TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("ab c\t\n.,!(")),  # few symbols: many matches, punctuation
        st.characters(codec="utf-8", categories=["L", "N", "P", "Zs", "Mn"]),
        st.characters(min_codepoint=0x4E00, max_codepoint=0x4E40),
    ),
    max_size=40,
)


@given(st.lists(st.tuples(TEXT, TEXT), max_size=12))
def test_statistics_equal_sacrebleu_on_random_unicode(pairs):
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    if not pairs:
        assert segment_statistics(hyps, refs).shape == (0, 18)
        return
    for params in (
        ChrfParams(),
        ChrfParams(word_order=2),
        ChrfParams(lowercase=True, whitespace=True),
    ):
        ours = segment_statistics(hyps, refs, params)
        assert np.array_equal(ours, _sacrebleu_stats(hyps, refs, params))
        metric = params.metric()
        assert score(ours, params) == metric.corpus_score(hyps, [refs]).score


def test_whitespace_table_is_what_str_split_splits_on():
    from iclr25.core.mufu.chrf import WHITESPACE

    assert list(WHITESPACE) == [c for c in range(0x110000) if chr(c).isspace()]


SPACEY = st.text(
    alphabet=st.one_of(
        st.sampled_from([chr(c) for c in (0x09, 0x0B, 0x1C, 0x1F, 0x85, 0xA0, 0x1680, 0x2007)]),
        st.sampled_from([chr(c) for c in (0x200A, 0x200B, 0x2028, 0x2029, 0x202F, 0x3000)]),
        st.sampled_from(list("aAbB İ")),  # 0x200B is no whitespace; İ lower-cases to 2
    ),
    max_size=30,
)


@given(st.lists(st.tuples(SPACEY, SPACEY), min_size=1, max_size=8))
def test_every_kind_of_whitespace_is_removed_as_sacrebleu_removes_it(pairs):
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    for params in (ChrfParams(), ChrfParams(lowercase=True), ChrfParams(word_order=2)):
        ours = segment_statistics(hyps, refs, params)
        assert np.array_equal(ours, _sacrebleu_stats(hyps, refs, params))


@given(
    st.lists(
        st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), max_size=60),
        min_size=1,
        max_size=40,
    )
)
def test_large_alphabet_rows_renumbered(texts):
    """More than 1023 distinct characters in a batch: the row-local ids path."""
    hyps, refs = texts, texts[::-1]
    assert np.array_equal(
        segment_statistics(hyps, refs), _sacrebleu_stats(hyps, refs, ChrfParams())
    )


def test_row_with_too_many_distinct_symbols_uses_the_reference():
    """A pair with > 1023 distinct characters (10 bits per symbol cannot hold it)."""
    rng = np.random.default_rng(0)
    hyp = "".join(chr(0x4E00 + int(i)) for i in rng.permutation(1500))
    ref = "".join(chr(0x4E00 + int(i)) for i in rng.permutation(1500)[:900]) + hyp[:50]
    pairs = ([hyp, "abc"], [ref, "abd"])
    assert np.array_equal(segment_statistics(*pairs), _sacrebleu_stats(*pairs, ChrfParams()))


SEQ = st.lists(st.integers(1, 6), max_size=25)


@given(st.lists(st.tuples(SEQ, SEQ), max_size=10), st.integers(1, 6), st.booleans())
def test_vectorised_counts_equal_the_definition(pairs, orders, small_chunks):
    hl = np.array([len(h) for h, _ in pairs], dtype=np.int64)
    rl = np.array([len(r) for _, r in pairs], dtype=np.int64)
    h = np.array([x for p, _ in pairs for x in p], dtype=np.int64)
    r = np.array([x for _, p in pairs for x in p], dtype=np.int64)
    chunk = 40 if small_chunks else 1 << 20
    m, c = match_counts_cpu(h, hl, r, rl, orders, covered=True, chunk_symbols=chunk)
    mr, cr = match_counts_reference(h, hl, r, rl, orders, covered=True)
    assert np.array_equal(m, mr) and np.array_equal(c, cr)


SEQ0 = st.lists(st.integers(0, 4), max_size=25)  # 0: a separator (the copy analysis)


@given(st.lists(st.tuples(SEQ0, SEQ0), min_size=1, max_size=8), st.integers(1, 6))
def test_zero_separators_on_either_side_never_match(pairs, orders):
    """n-grams with a 0 count on neither side: the CPU path's reference-side sentinel."""
    hl = np.array([len(h) for h, _ in pairs], dtype=np.int64)
    rl = np.array([len(r) for _, r in pairs], dtype=np.int64)
    h = np.array([x for p, _ in pairs for x in p], dtype=np.int64)
    r = np.array([x for _, p in pairs for x in p], dtype=np.int64)
    m, c = match_counts_cpu(h, hl, r, rl, orders, covered=True)
    mr, cr = match_counts_reference(h, hl, r, rl, orders, covered=True)
    assert np.array_equal(m, mr) and np.array_equal(c, cr)


@given(SEQ, SEQ, st.integers(1, 6))
def test_kernel_block_emulation_equals_the_definition(hyp, ref, orders):
    """Steps of one CUDA block (local ids, window keys, sort, group scans), in numpy."""
    from iclr25.gpu.kernels.chrf_stats.reference import pair_counts_reference

    assert emulate_block(hyp, ref, orders) == pair_counts_reference(hyp, ref, orders)


def test_candidates_separated_by_zeros_are_not_bridged():
    """covered counts n-grams found in any candidate; none spans two candidates."""
    hyp = np.array([1, 2, 3])
    ref = np.array([1, 2, 0, 0, 3])  # candidates "12" and "3", separated for 3-grams
    _, covered = match_counts_reference(hyp, [3], ref, [5], 3, covered=True)
    assert covered.tolist() == [[3, 1, 0]]  # 1,2,3 / 12 / nothing
    m, c = match_counts_cpu(hyp, [3], ref, [5], 3, covered=True)
    assert c.tolist() == [[3, 1, 0]] and m.tolist() == [[3, 1, 0]]


def test_rows_with_rare_symbols_of_a_large_alphabet_get_chunks_of_their_own():
    """Frequent symbols get small ids: short-alphabet rows are counted with global ids,
    rows holding a rare symbol (id >= 2^10 for 6 orders) renumbered per row; both exact."""
    from iclr25.gpu.kernels.chrf_stats.reference import dense_ids, frequency_ranked

    rng = np.random.default_rng(3)
    common = [rng.integers(1, 30, size=int(rng.integers(0, 40))) for _ in range(40)]
    rare = [rng.integers(1, 100_000, size=int(rng.integers(150, 300))) for _ in range(12)]
    seqs = common + rare
    hyps = [s[rng.permutation(len(s))] for s in seqs]
    hl = np.array([len(s) for s in hyps])
    rl = np.array([len(s) for s in seqs])
    h, r = np.concatenate(hyps), np.concatenate(seqs)
    ids = frequency_ranked(*dense_ids(np.concatenate([h, r])))
    assert ids.max() >= 1 << 10 and ids[: hl[:40].sum()].max() < 1 << 10  # both kinds
    m, c = match_counts_cpu(h, hl, r, rl, 6, covered=True, chunk_symbols=2000)
    mr, cr = match_counts_reference(h, hl, r, rl, 6, covered=True)
    assert np.array_equal(m, mr) and np.array_equal(c, cr)
