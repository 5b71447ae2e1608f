"""Per-pair n-gram match counts (chrF's statistics): the definition and the CPU fast path.

Input: for each pair p, a hypothesis and a reference as sequences of positive integer
symbols (characters or words, densely numbered by the caller), in CSR form
``(flat symbols, lengths)``. For each order n = 1..N:

- ``match[p, n-1] = Σ_g min(H_p(g), R_p(g))`` over the n-grams g, where H_p and R_p
  count the n-grams of the hypothesis and of the reference (chrF's intersection);
- ``covered[p, n-1] = Σ_g H_p(g) · [R_p(g) > 0]``: hypothesis n-grams found in the
  reference (the copy analysis; its "reference" may hold several candidates separated
  by N - 1 zero symbols, which no n-gram crosses).

:func:`match_counts_reference` is the definition with ``collections.Counter``;
:func:`match_counts_cpu` is the vectorised path, exact by construction (no hashing):

1. every symbol gets a dense id 1..A-1 (0 = nothing), numbered by decreasing frequency;
   rows are grouped into chunks of similar length whose largest id sets ``b`` bits per
   symbol (rows with a rare symbol of a large alphabet go to chunks of their own);
2. each pair is one row ``[hyp | N-1 zeros | ref | N-1 zeros | padding]``, and each row
   position i the 64-bit key ``(s_i, s_{i+1}, .., s_{i+N-1}) << 1 | side`` (b bits per
   symbol, the side bit 0 for the hypothesis, 1 for the reference; a key whose first
   symbol is 0 is set to 0);
3. one sort per row. Sorting by the N-symbol window sorts by every prefix, so for each
   order n the equal n-grams of a row are consecutive: groups start where two
   neighbours differ above bit ``1 + b(N-n)``. A group is a real n-gram when its n-th
   symbol is not 0; its reference count R is the number of side bits in it (a cumulative
   sum), its hypothesis count H the rest;
4. ``N*b + 1 > 64`` (a large alphabet): the ids are renumbered within each row (a pair has
   few distinct symbols); a row with more than ``2^(63 // N)`` distinct symbols is
   computed by the reference (never seen with real sentences).

The CUDA kernel (``kernel.cu``) runs steps 2–4 for one pair per block;
:func:`emulate_block` transcribes one block's steps in numpy for the tests.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

KEY_BITS = 63  # usable key bits besides the side bit
# padded row symbols per chunk: ~32k keys (256 KiB of uint64) stay in a core's L2 cache;
# measured 2x faster than 1M-symbol chunks on 2,000 FLORES-like pairs (less padding too)
CHUNK_SYMBOLS = 1 << 15


# ---------------------------------------------------------------------------------------
# The definition
# ---------------------------------------------------------------------------------------
def _ngrams(seq, n: int) -> Counter:
    """n-grams of ``seq`` that contain no 0 (a 0 separates candidates)."""
    seq = list(seq)
    return Counter(
        tuple(seq[i : i + n]) for i in range(len(seq) - n + 1) if 0 not in seq[i : i + n]
    )


def pair_counts_reference(hyp, ref, orders: int) -> tuple[list[int], list[int]]:
    """(match, covered) per order for one pair, by definition."""
    match, covered = [], []
    for n in range(1, orders + 1):
        h, r = _ngrams(hyp, n), _ngrams(ref, n)
        match.append(sum(min(c, r[g]) for g, c in h.items() if g in r))
        covered.append(sum(c for g, c in h.items() if g in r))
    return match, covered


def _split(flat, lengths) -> list[np.ndarray]:
    ends = np.cumsum(lengths)
    return [flat[e - n : e] for e, n in zip(ends, lengths, strict=True)]


def match_counts_reference(hyp, hyp_len, ref, ref_len, orders: int, covered: bool = False):
    """(n, orders) int64 match counts (and covered counts with ``covered=True``)."""
    hyps, refs = _split(np.asarray(hyp), hyp_len), _split(np.asarray(ref), ref_len)
    out = [pair_counts_reference(h, r, orders) for h, r in zip(hyps, refs, strict=True)]
    m = np.array([o[0] for o in out], dtype=np.int64).reshape(len(out), orders)
    c = np.array([o[1] for o in out], dtype=np.int64).reshape(len(out), orders)
    return (m, c) if covered else m


# ---------------------------------------------------------------------------------------
# The vectorised CPU path
# ---------------------------------------------------------------------------------------
def dense_ids(symbols: np.ndarray) -> tuple[np.ndarray, int]:
    """Symbols renumbered 1..A-1 in value order (0 stays 0); returns (ids, A)."""
    symbols = np.asarray(symbols, dtype=np.int64)
    if symbols.size == 0:
        return symbols.astype(np.int64), 1
    top = int(symbols.max())
    if top < 1 << 24:  # a lookup table over the value range
        present = np.zeros(top + 1, dtype=np.int64)
        present[symbols] = 1
        present[0] = 0
        lut = np.cumsum(present)
        return lut[symbols], int(lut[-1]) + 1
    values, inverse = np.unique(symbols, return_inverse=True)
    ids = inverse.astype(np.int64) + (1 if values[0] != 0 else 0)
    return ids, int(ids.max()) + 1


def _rows(hyp_ids, hyp_len, ref_ids, ref_len, orders: int) -> tuple[np.ndarray, np.ndarray]:
    """(symbols (B, W), side (B, W)) in the row layout of step 2, W = max row + N - 1."""
    gap = orders - 1
    n = len(hyp_len)
    width = max(1, int((hyp_len + ref_len).max(initial=0)) + 2 * gap)
    sym = np.zeros(n * width, dtype=np.int64)
    row0 = np.arange(n) * width
    sym[_flat_positions(row0, hyp_len)] = hyp_ids
    sym[_flat_positions(row0 + hyp_len + gap, ref_len)] = ref_ids
    side = (np.arange(width)[None, :] >= (hyp_len + gap)[:, None]).astype(np.uint64)
    return sym.reshape(n, width), side


def _flat_positions(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """starts[i], starts[i] + 1, .., starts[i] + lengths[i] - 1 for every i, concatenated."""
    total = int(lengths.sum())
    shift = starts - (np.cumsum(lengths) - lengths)
    return np.arange(total) + np.repeat(shift, lengths)


def _row_local_ids(sym: np.ndarray) -> np.ndarray:
    """Renumber each row's symbols 1..a_row (0 stays 0): step 4."""
    order = np.argsort(sym, axis=1)  # any order of equal symbols numbers them alike
    s = np.take_along_axis(sym, order, axis=1)
    new = np.concatenate([s[:, :1] != 0, s[:, 1:] != s[:, :-1]], axis=1).cumsum(axis=1)
    local = np.empty_like(sym)
    np.put_along_axis(local, order, new, axis=1)
    return local


def _window_keys(
    sym: np.ndarray, side: np.ndarray, orders: int, bits: int, zero_gaps: bool = True
) -> np.ndarray:
    """(B, W) uint64 keys (s_i .. s_{i+N-1}) << 1 | side; 0 where s_i = 0 when
    ``zero_gaps`` (the kernel's layout; the CPU path marks gaps by a sentinel instead)."""
    n, width = sym.shape
    padded = np.zeros((n, width + orders - 1), dtype=np.uint64)
    padded[:, :width] = sym
    key = padded[:, :width].copy()
    shift = np.uint64(bits)
    for j in range(1, orders):  # Horner, in place: key = key << b | s_{i+j}
        np.left_shift(key, shift, out=key)
        np.bitwise_or(key, padded[:, j : j + width], out=key)
    np.left_shift(key, np.uint64(1), out=key)
    key |= side
    if zero_gaps:
        key[sym == 0] = 0
    return key


def _group_counts(keys: np.ndarray, orders: int, bits: int, covered: bool):
    """Step 3 on sorted keys (B, W): (match, covered) (B, orders) int64.

    Every n-gram group counts: one that runs into a gap is either hypothesis-only
    (symbol 0) or reference-only (the sentinel, :func:`_chunk_counts`), so its
    min(H, R) and H·[R > 0] are 0 without testing its n-th symbol."""
    n_rows, width = keys.shape
    size = keys.size
    flat = keys.ravel()
    side_cum = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(flat & np.uint64(1), out=side_cum[1:])
    diff = keys[:, 1:] ^ keys[:, :-1]  # (B, W-1)
    match = np.zeros((n_rows, orders), dtype=np.int64)
    cover = np.zeros((n_rows, orders), dtype=np.int64) if covered else None
    is_bound = np.ones(size + 1, dtype=bool)  # group starts, and one past the end
    start = is_bound[:size].reshape(n_rows, width)  # a row's first key always starts one
    row_starts = np.arange(n_rows) * width
    for n in range(1, orders + 1):
        # a group starts where the first n symbols differ: diff >> shift != 0
        np.greater_equal(diff, np.uint64(1 << (1 + bits * (orders - n))), out=start[:, 1:])
        bounds = np.flatnonzero(is_bound)
        r = np.diff(side_cum[bounds])
        h = np.diff(bounds) - r
        first = np.searchsorted(bounds, row_starts)  # each row's first group
        match[:, n - 1] = np.add.reduceat(np.minimum(h, r), first)
        if covered:
            cover[:, n - 1] = np.add.reduceat(np.where(r > 0, h, 0), first)
    return match, cover


def _chunk_counts(hyp_ids, hyp_len, ref_ids, ref_len, orders, covered):
    """One chunk of rows. The reference side's 0s (gap, padding, separators) become the
    sentinel ``top`` (one more than any id), so no n-gram that runs into a gap is shared
    by the two sides; ``top`` sets the bits per symbol."""
    sym, side = _rows(hyp_ids, hyp_len, ref_ids, ref_len, orders)
    fallback = np.zeros(len(hyp_len), dtype=bool)
    top = int(sym.max(initial=0)) + 1
    if orders * top.bit_length() > KEY_BITS:
        sym = _row_local_ids(sym)
        top = int(sym.max(initial=0)) + 1
        limit = (1 << (KEY_BITS // orders)) - 1
        if top > limit:
            fallback = sym.max(axis=1) >= limit
            sym[fallback] = 0
            top = limit
    sym[(sym == 0) & (side == 1)] = top
    bits = top.bit_length()
    keys = _window_keys(sym, side, orders, bits, zero_gaps=False)
    keys.sort(axis=1)
    match, cover = _group_counts(keys, orders, bits, covered)
    return match, cover, fallback


def match_counts_cpu(
    hyp,
    hyp_len,
    ref,
    ref_len,
    orders: int,
    covered: bool = False,
    chunk_symbols: int = CHUNK_SYMBOLS,
):
    """The vectorised path (module docstring); same results as the reference."""
    hyp_len = np.asarray(hyp_len, dtype=np.int64)
    ref_len = np.asarray(ref_len, dtype=np.int64)
    n = len(hyp_len)
    match = np.zeros((n, orders), dtype=np.int64)
    cover = np.zeros((n, orders), dtype=np.int64)
    if n == 0 or orders == 0:
        return (match, cover) if covered else match
    ids = ranked_ids(np.concatenate([np.asarray(hyp), np.asarray(ref)]))
    hyp_ids, ref_ids = ids[: int(hyp_len.sum())], ids[int(hyp_len.sum()) :]
    h_off = np.concatenate([[0], np.cumsum(hyp_len)])
    r_off = np.concatenate([[0], np.cumsum(ref_len)])
    total = hyp_len + ref_len
    row_max = np.maximum(_segment_max(hyp_ids, hyp_len), _segment_max(ref_ids, ref_len))
    wide = row_max + 1 >= 1 << (KEY_BITS // orders)  # rows that need step 4's renumbering
    order = np.lexsort((total, wide))  # by need, then length: less padding per chunk
    for chunk in _class_chunks(total[order], wide[order], chunk_symbols):
        rows = order[chunk]
        h_idx = _gather_index(h_off, rows)
        r_idx = _gather_index(r_off, rows)
        m, c, fallback = _chunk_counts(
            hyp_ids[h_idx], hyp_len[rows], ref_ids[r_idx], ref_len[rows], orders, covered
        )
        for i in np.flatnonzero(fallback):
            p = rows[i]
            h = hyp_ids[h_off[p] : h_off[p + 1]]
            r = ref_ids[r_off[p] : r_off[p + 1]]
            m[i], c_ref = pair_counts_reference(h, r, orders)
            if covered:
                c[i] = c_ref
        match[rows] = m
        if covered:
            cover[rows] = c
    return (match, cover) if covered else match


def ranked_ids(symbols: np.ndarray) -> np.ndarray:
    """:func:`frequency_ranked` of :func:`dense_ids` (the same ids), in one count over
    the value range when it is small."""
    symbols = np.asarray(symbols, dtype=np.int64)
    top = int(symbols.max(initial=0))
    if symbols.size == 0 or top >= 1 << 24 or int(symbols.min()) < 0:
        ids, alphabet = dense_ids(symbols)
        return frequency_ranked(ids, alphabet)
    counts = np.bincount(symbols, minlength=top + 1)
    counts[0] = 0  # 0 stays 0
    present = int(np.count_nonzero(counts))
    by_count = np.argsort(-counts[1:], kind="stable")[:present] + 1  # ties: value order
    new = np.zeros(top + 1, dtype=np.int64)
    new[by_count] = np.arange(1, present + 1)
    return new[symbols]


def frequency_ranked(ids: np.ndarray, alphabet: int) -> np.ndarray:
    """Dense ids renumbered by decreasing frequency (0 stays 0): frequent symbols get
    small ids, so most rows of a mixed-script batch fit ``KEY_BITS // orders`` bits."""
    counts = np.bincount(ids, minlength=alphabet)
    by_count = np.argsort(-counts[1:], kind="stable") + 1
    new = np.zeros(alphabet, dtype=np.int64)
    new[by_count] = np.arange(1, alphabet)
    return new[ids]


def _segment_max(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """(n,) largest value of each CSR segment (0 for an empty one)."""
    out = np.zeros(len(lengths), dtype=np.int64)
    nonempty = lengths > 0
    if values.size:
        starts = (np.cumsum(lengths) - lengths)[nonempty]
        out[nonempty] = np.maximum.reduceat(values, starts)
    return out


def _class_chunks(sorted_totals: np.ndarray, wide: np.ndarray, chunk_symbols: int):
    """:func:`_chunks` within each run of equal ``wide`` (rows sorted by it first)."""
    cut = int(np.searchsorted(wide, True))  # wide is False..., True...
    out = _chunks(sorted_totals[:cut], chunk_symbols)
    rest = _chunks(sorted_totals[cut:], chunk_symbols)
    return out + [slice(c.start + cut, c.stop + cut) for c in rest]


def _chunks(sorted_totals: np.ndarray, chunk_symbols: int) -> list[slice]:
    """Consecutive slices of the length-sorted rows, each about ``chunk_symbols`` padded
    symbols (a chunk's width is its last, longest row)."""
    out, start, n = [], 0, len(sorted_totals)
    while start < n:
        lo, hi = start + 1, n  # the largest stop with (stop - start) * width <= budget
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if (mid - start) * (int(sorted_totals[mid - 1]) + 16) <= chunk_symbols:
                lo = mid
            else:
                hi = mid - 1
        out.append(slice(start, lo))
        start = lo
    return out


def _gather_index(offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Flat indices of the CSR segments ``rows`` (in that order)."""
    lengths = offsets[rows + 1] - offsets[rows]
    starts = np.repeat(offsets[rows] - np.cumsum(lengths) + lengths, lengths)
    return np.arange(int(lengths.sum())) + starts


# ---------------------------------------------------------------------------------------
# One CUDA block, step by step
# ---------------------------------------------------------------------------------------
LOCAL_BITS = 10  # the kernel renumbers each pair's symbols into 10 bits (<= 1023 distinct)


def emulate_block(hyp, ref, orders: int) -> tuple[list[int], list[int]] | None:
    """What one block of ``chrf_pair_counts`` computes for one pair (None: overflow).

    1. local ids: sort (symbol << 12 | position), rank the distinct symbols from 1;
    2. keys: (local id window) << 1 | side in one array of capacity 2^ceil(log2(len));
    3. bitonic sort (here: np.sort, the same order);
    4. for each order, a thread at a group start scans its group and adds min(H, R)."""
    hyp, ref = np.asarray(hyp, dtype=np.int64), np.asarray(ref, dtype=np.int64)
    gap = orders - 1
    sym = np.concatenate([hyp, np.zeros(gap, np.int64), ref, np.zeros(gap, np.int64)])
    side = np.concatenate([np.zeros(len(hyp) + gap), np.ones(len(ref) + gap)]).astype(np.uint64)
    local = np.zeros_like(sym)
    nz = np.flatnonzero(sym)
    if nz.size:
        ranks = np.unique(sym[nz], return_inverse=True)[1] + 1
        if ranks.max() >= 1 << LOCAL_BITS:
            return None
        local[nz] = ranks
    keys = np.sort(_window_keys(local[None, :], side[None, :], orders, LOCAL_BITS)[0])
    match, cover = [], []
    for n in range(1, orders + 1):
        shift = 1 + LOCAL_BITS * (orders - n)
        prefix = keys >> np.uint64(shift)
        m = c = 0
        for j in range(len(keys)):
            if j > 0 and prefix[j] == prefix[j - 1]:
                continue  # not a group start
            if int(prefix[j]) & ((1 << LOCAL_BITS) - 1) == 0:
                continue  # the n-gram runs past its sequence (or padding)
            e = j
            while e < len(keys) and prefix[e] == prefix[j]:
                e += 1
            r = int((keys[j:e] & np.uint64(1)).sum())
            h = (e - j) - r
            m += min(h, r)
            c += h if r > 0 else 0
        match.append(m)
        cover.append(c)
    return match, cover


# ---------------------------------------------------------------------------------------
# Bootstrap resample sums
# ---------------------------------------------------------------------------------------
def bootstrap_sums_reference(stats, indices) -> np.ndarray:
    """(R, S) int64: Σ_i stats[indices[r, i]] by definition (a gather, then a sum)."""
    stats = np.asarray(stats, dtype=np.int64)
    return stats[np.asarray(indices)].sum(axis=1)


def bootstrap_sums_cpu(stats, indices, block: int = 32) -> np.ndarray:
    """The same sums via how often each segment is drawn: counts (R, n) @ stats (n, S).

    Exact: counts and statistics are non-negative integers, and every partial sum of a
    product row is at most ``draws × max(stats)``; below 2^24 the product runs in float32
    (twice float64's speed), below 2^53 in float64, above that by definition. Blocks of
    ``block`` resamples keep each block's counts (block × n) in a core's cache: measured
    2x faster than 256-resample blocks on 1,000 × 2,000 draws."""
    stats = np.asarray(stats, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    n_res, draws = indices.shape
    m, width = stats.shape
    if n_res == 0 or width == 0 or draws == 0:
        return np.zeros((n_res, width), dtype=np.int64)
    bound = float(draws) * float(np.abs(stats).max(initial=0))
    if bound >= 2.0**53 or stats.min(initial=0) < 0:
        return bootstrap_sums_reference(stats, indices)
    dtype = np.float32 if bound < 2.0**24 else np.float64
    stats_f = stats.astype(dtype)
    out = np.empty((n_res, width), dtype=dtype)
    offsets = (np.arange(block, dtype=np.int64) * m)[:, None]
    for s in range(0, n_res, block):
        rows = indices[s : s + block]  # (b, draws)
        b = rows.shape[0]
        counts = np.bincount((rows + offsets[:b]).ravel(), minlength=b * m)
        np.matmul(counts.reshape(b, m).astype(dtype), stats_f, out=out[s : s + b])
    return out.astype(np.int64)
