"""The Hopper kernels' index maps and ring protocol, checked on the CPU.

``hopper_probe.cu`` is compiled for the host with nvcc and prints the functions of
``iclr25/gpu/include/hopper.cuh`` that gemm_hopper calls. This file holds an independent
model of what the hardware does with them, written from the PTX ISA and the CUDA TMA
documentation:

- TMA with the 128-byte swizzle writes row r of a box (128 bytes) at ``dst + 128 r`` with
  its 16-byte chunk c moved to chunk ``c ^ (r % 8)`` (dst 1024-byte aligned); stores read
  the same pattern back;
- wgmma reads a K-major operand element (row, k) at ``start + SBO (row // 8) + 128 (row %
  8) + 2 k`` and an MN-major one (k, mn) at ``start + LBO (mn // 64) + SBO (k // 8) + 128
  (k % 8) + 2 (mn % 64)``, both through the 128-byte swizzle of the address (bits 4-6 XOR
  bits 7-9), with start / LBO / SBO decoded from the matrix descriptor;
- the fp32 accumulator fragment of m64nNk16;
- mbarriers: a phase completes when its pending arrivals and its transaction bytes reach
  zero; ``try_wait.parity p`` passes once the phase of parity p has completed.

and checks, for every operand layout, that the boxes the producer issues and the
descriptors the consumers build hand wgmma exactly the A and B sub-tiles of the product;
that the epilogue's staging writes and the TMA stores reconstruct the accumulator tile,
with bank-conflict-free writes; that the persistent scheduler covers every tile exactly
once (phantom tiles only where a cluster pairs an odd tile row); and, by simulating the
producer, the consumers and the asynchronous copies under random interleavings, that the
ring's stage / parity arithmetic and arrival counts never deadlock and never let a copy
overwrite a stage that is still being read — with and without 2-CTA multicast.
"""

from __future__ import annotations

import random
import subprocess
from collections import defaultdict

import numpy as np
import pytest

from iclr25.gpu.compile import nvcc_path
from iclr25.gpu.kernels import gemm_hopper
from iclr25.gpu.registry import include_dir

pytestmark = pytest.mark.skipif(nvcc_path() is None, reason="nvcc not on PATH")
PROBE = __file__.replace("test_hopper_layout.py", "hopper_probe.cu")


@pytest.fixture(scope="module")
def maps(tmp_path_factory):
    exe = tmp_path_factory.mktemp("probe") / "hopper_probe"
    cmd = [nvcc_path(), "-arch=sm_90a", "-std=c++17", f"-I{include_dir()}", "-o", str(exe), PROBE]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    tables: dict[str, list[tuple[int, ...]]] = defaultdict(list)
    for line in out.splitlines():
        name, *values = line.split()
        tables[name].append(tuple(int(v) for v in values))
    return tables


# --- the model (PTX ISA / TMA documentation) ------------------------------------------------
def decode(desc: int) -> tuple[int, int, int, int]:
    """(start, LBO, SBO, swizzle mode) of a wgmma matrix descriptor."""
    field = lambda lo: ((desc >> lo) & 0x3FFF) << 4  # noqa: E731
    return field(0), field(16), field(32), desc >> 62


def isa_swizzle(addr: int) -> int:
    """128-byte swizzle: the 16-byte chunk index (address bits 4-6) XOR the row of the
    1024-byte pattern (bits 7-9)."""
    return addr ^ (((addr >> 7) & 7) << 4)


def tma_box_offset(dst: int, r: int, c: int) -> int:
    """Byte address where a 128-byte-swizzled TMA box puts element (r, c) (16-bit)."""
    assert dst % 1024 == 0
    chunk = (c // 8) ^ (r % 8)
    return dst + 128 * r + 16 * chunk + 2 * (c % 8)


def tma_load(smem: dict, dst: int, stored: np.ndarray, c0: int, c1: int, box: tuple) -> None:
    """Copy the box at column c0, row c1 of ``stored`` (box = (cols, rows)); outside: 0."""
    cols, rows = box
    for r in range(rows):
        for c in range(cols):
            inside = c1 + r < stored.shape[0] and c0 + c < stored.shape[1]
            smem[tma_box_offset(dst, r, c)] = int(stored[c1 + r, c0 + c]) if inside else 0


def wgmma_kmajor(smem: dict, desc: int, rows: int) -> np.ndarray:
    start, _, sbo, mode = decode(desc)
    assert mode == 1
    out = np.zeros((rows, 16), dtype=np.int64)
    for r in range(rows):
        for k in range(16):
            out[r, k] = smem[isa_swizzle(start + sbo * (r // 8) + 128 * (r % 8) + 2 * k)]
    return out


def wgmma_mnmajor(smem: dict, desc: int, cols: int) -> np.ndarray:
    start, lbo, sbo, mode = decode(desc)
    assert mode == 1
    out = np.zeros((16, cols), dtype=np.int64)
    for k in range(16):
        for c in range(cols):
            addr = start + lbo * (c // 64) + sbo * (k // 8) + 128 * (k % 8) + 2 * (c % 64)
            out[k, c] = smem[isa_swizzle(addr)]
    return out


def isa_accumulator(t: int, i: int) -> tuple[int, int]:
    """m64nNk16 fp32 D fragment: warp w = t / 32 owns rows 16w..16w+15; lane l holds, for
    each 8-column group g = i / 4, rows l / 4 and l / 4 + 8, columns 2 (l % 4) and + 1."""
    warp, lane = divmod(t, 32)
    return 16 * warp + lane // 4 + 8 * ((i % 4) // 2), 8 * (i // 4) + 2 * (lane % 4) + i % 2


def ids(rows: int, cols: int, offset: int = 1) -> np.ndarray:
    return np.arange(offset, offset + rows * cols, dtype=np.int64).reshape(rows, cols)


# --- swizzle, descriptors, operand tiles ------------------------------------------------------
def test_swizzle_is_the_isa_pattern(maps):
    assert len(maps["swz"]) == 256
    for addr, out in maps["swz"]:
        assert out == isa_swizzle(addr)


def test_descriptors_encode_start_lbo_sbo_and_the_128_byte_swizzle(maps):
    ((k,),), ((mn,),) = maps["kdesc_sample"], maps["mndesc_sample"]
    assert decode(k) == (0x2400 + 32, 16, 1024, 1)
    assert decode(mn) == (0x2400 + 2048, 8192, 1024, 1)


def test_nn_descriptors_are_those_of_the_kernel_verified_on_an_h200(maps):
    """gemm_wgmma (A K-major, B N-major) was checked against the fp32 product on an H200
    with desc(base + 32 kk, 16, 1024) for A and desc(base + 2048 kk, 8192, 1024) for B; the
    model must accept those, which anchors the MN-major reading of LBO and SBO."""
    old_a = lambda base, kk: (base + 32 * kk, 16, 1024, 1)  # noqa: E731
    old_b = lambda base, kk: (base + 2048 * kk, 8192, 1024, 1)  # noqa: E731
    adesc = {(a_t, c, kk): d for a_t, c, kk, d in maps["adesc"]}
    for c in range(2):
        for kk in range(4):
            assert decode(adesc[(0, c, kk)]) == old_a(c * 64 * 128, kk)
    for b_t, kk, d in maps["bdesc"]:
        if b_t == 0:
            assert decode(d) == old_b(0, kk)


@pytest.mark.parametrize("a_t", [0, 1])
def test_a_boxes_and_descriptors_hand_wgmma_the_a_tile(maps, a_t):
    m0, k0 = 384, 192  # the probe's tile corner
    a = ids(640, 320)  # (M, K), unique values
    stored = a.T.copy() if a_t else a  # "t": the (K, M) matrix is what TMA reads
    smem: dict[int, int] = {}
    box = gemm_hopper.BOX_A["t" if a_t else "n"]
    boxes = [(dst, c0, c1) for t, _, dst, c0, c1 in maps["abox"] if t == a_t]
    assert len(boxes) == (2 if a_t else 1)
    for dst, c0, c1 in boxes:
        tma_load(smem, dst, stored, c0, c1, box)
    assert len(smem) == 128 * 64  # the boxes fill the 16 KiB stage exactly, no overlap
    for t, c, kk, desc in maps["adesc"]:
        if t != a_t:
            continue
        got = wgmma_mnmajor(smem, desc, 64).T if a_t else wgmma_kmajor(smem, desc, 64)
        rows = slice(m0 + 64 * c, m0 + 64 * c + 64)
        np.testing.assert_array_equal(got, a[rows, k0 + 16 * kk : k0 + 16 * kk + 16])


@pytest.mark.parametrize("b_t", [0, 1])
def test_b_boxes_and_descriptors_hand_wgmma_the_b_tile(maps, b_t):
    n0, k0 = 512, 192
    b = ids(320, 1024)  # (K, N)
    stored = b.T.copy() if b_t else b  # "t": W = B^T, (N, K), is what TMA reads
    smem: dict[int, int] = {}
    box = gemm_hopper.BOX_B["t" if b_t else "n"]
    boxes = [(h, dst, c0, c1) for t, h, _, dst, c0, c1 in maps["bbox"] if t == b_t]
    assert sorted({h for h, *_ in boxes}) == [0, 1]  # two halves (one per CTA of a cluster)
    for _, dst, c0, c1 in boxes:
        tma_load(smem, dst, stored, c0, c1, box)
    assert len(smem) == 64 * 256
    for t, kk, desc in maps["bdesc"]:
        if t != b_t:
            continue
        got = wgmma_kmajor(smem, desc, 256).T if b_t else wgmma_mnmajor(smem, desc, 256)
        np.testing.assert_array_equal(got, b[k0 + 16 * kk : k0 + 16 * kk + 16, n0 : n0 + 256])


def test_attention_panels_and_descriptors_hand_wgmma_q_k_and_v(maps):
    """attention_hopper (D = 128, 128 keys): Q, K and V as two 64-column panels per tile
    (one TMA box each, at panel * rows * 128 bytes). S = Q K^T reads Q rows 64c.. and K
    K-major; O += P V reads V MN-major (LBO = one panel)."""
    q, k, v = ids(128, 128), ids(128, 128, offset=10**6), ids(128, 128, offset=2 * 10**6)
    for matrix, name in ((q, "attn_q"), (k, "attn_k"), (v, "attn_v")):
        smem: dict[int, int] = {}
        for panel in range(2):  # tma_load_3d(base + panel * rows * 128, ..., 64 panel, row0)
            tma_load(smem, panel * 128 * 128, matrix, 64 * panel, 0, (64, 128))
        for *where, desc in maps[name]:
            kk = where[-1]
            cols = slice(16 * kk, 16 * kk + 16)
            if name == "attn_q":
                c = where[0]
                np.testing.assert_array_equal(
                    wgmma_kmajor(smem, desc, 64), q[64 * c : 64 * c + 64, cols]
                )
            elif name == "attn_k":  # B of S = Q K^T: (n = key, k = d)
                np.testing.assert_array_equal(wgmma_kmajor(smem, desc, 128), k[:, cols])
            else:  # B of O += P V: (k = key, n = d)
                np.testing.assert_array_equal(wgmma_mnmajor(smem, desc, 128), v[cols, :])
    assert len(maps["attn_q"]) == 16 and len(maps["attn_v"]) == 8


def test_edge_boxes_read_zeros_outside_the_matrix():
    """The model's TMA fills out-of-bounds elements with zeros (what the tensor maps ask
    for): an edge tile then multiplies zeros beyond M, N and K."""
    smem: dict[int, int] = {}
    tma_load(smem, 0, ids(100, 70), 64, 64, (64, 128))  # 36 rows and 6 columns inside
    inside = [smem[tma_box_offset(0, r, c)] for r in range(36) for c in range(6)]
    assert all(inside) and smem[tma_box_offset(0, 36, 0)] == 0
    assert smem[tma_box_offset(0, 0, 6)] == 0


def test_stage_buffers_are_1024_byte_aligned():
    """The address-based swizzle of wgmma equals TMA's row-based one only on 1024-byte
    aligned buffers: every stage, operand, staging slice and strip starts on one."""
    for size in (gemm_hopper.STAGE_BYTES, 128 * 64 * 2, gemm_hopper.C_BYTES // 2, 8192):
        assert size % 1024 == 0


# --- accumulator, epilogue staging, TMA stores --------------------------------------------
def test_accumulator_fragment_is_the_isa_layout_and_a_bijection(maps):
    seen = set()
    for t, i, row, col in maps["acc"]:
        assert (row, col) == isa_accumulator(t, i)
        # the epilogue of gemm_wgmma, verified on an H200, used the same map
        warp, lane = divmod(t, 32)
        assert row == 16 * warp + lane // 4 + (8 if i % 4 >= 2 else 0)
        seen.add((row, col))
    assert seen == {(r, c) for r in range(64) for c in range(256)}


def test_staging_writes_and_tma_stores_rebuild_the_tile_without_bank_conflicts(maps):
    offset = {(row, col): off for row, col, off in maps["stage"]}
    smem: dict[int, int] = {}
    tile = ids(64, 256)
    for t in range(128):
        for j in range(32):
            for i in (4 * j, 4 * j + 2):  # the pair (i, i + 1) is one 32-bit store
                row, col = isa_accumulator(t, i)
                addr = offset[(row, col)]
                assert addr % 4 == 0 and addr not in smem
                smem[addr], smem[addr + 2] = tile[row, col], tile[row, col + 1]
    assert len(smem) == 64 * 256
    box_cols, box_rows = gemm_hopper.BOX_C
    rebuilt = np.zeros_like(tile)
    for strip in range(256 // box_cols):  # tma_store(stage + strip * 64 * 128, n0 + 64 strip)
        for r in range(box_rows):
            for c in range(box_cols):
                rebuilt[r, box_cols * strip + c] = smem[tma_box_offset(strip * 8192, r, c)]
    np.testing.assert_array_equal(rebuilt, tile)
    for warp in range(4):  # one warp's 32 stores of one (j, half) hit 32 distinct banks
        for j in range(32):
            for i in (4 * j, 4 * j + 2):
                banks = {
                    (offset[isa_accumulator(t, i)] // 4) % 32
                    for t in range(32 * warp, 32 * warp + 32)
                }
                assert len(banks) == 32


# --- the persistent scheduler -----------------------------------------------------------
def test_scheduler_covers_every_tile_once_and_pairs_cluster_tiles(maps):
    configs: dict[tuple, list] = defaultdict(list)
    for num_m, num_n, cluster, w, rank, tm, tn in maps["tile"]:
        configs[(num_m, num_n, cluster)].append((w, rank, tm, tn))
    assert len(configs) == 6 * 4 * 2
    for (num_m, num_n, cluster), rows in configs.items():
        real = [(tm, tn) for _, _, tm, tn in rows if tm < num_m]
        assert sorted(real) == [(m, n) for m in range(num_m) for n in range(num_n)]
        phantom = [(tm, tn) for _, _, tm, tn in rows if tm >= num_m]
        assert all(tm == num_m for tm, _ in phantom)
        assert len(phantom) == (num_n if cluster == 2 and num_m % 2 else 0)
        by_w = defaultdict(dict)
        for w, rank, tm, tn in rows:
            by_w[w][rank] = (tm, tn)
        for pair in by_w.values():  # the CTAs of a cluster share B: same tile column
            assert len({tn for _, tn in pair.values()}) == 1
            assert [tm - pair[0][0] for tm, _ in pair.values()] == list(range(cluster))


def test_scheduler_walks_down_a_group_of_tile_rows_first(maps):
    rows = [(w, tm, tn) for nm, nn, cl, w, _, tm, tn in maps["tile"] if (nm, nn, cl) == (17, 7, 1)]
    first = sorted(rows)[:8]
    assert [(tm, tn) for _, tm, tn in first] == [(m, 0) for m in range(8)]


# --- the ring protocol -------------------------------------------------------------------
class Barrier:
    """An mbarrier: ``count`` arrivals and the expected transaction bytes end a phase."""

    def __init__(self, count: int) -> None:
        self.count, self.pending, self.tx, self.completed = count, count, 0, 0

    def arrive(self, expect_tx: int = 0) -> None:
        self.tx += expect_tx
        self.pending -= 1
        self._maybe_complete()

    def complete_tx(self, amount: int) -> None:
        self.tx -= amount
        self._maybe_complete()

    def _maybe_complete(self) -> None:
        assert self.pending >= 0
        if self.pending == 0 and self.tx == 0:
            self.completed += 1
            self.pending = self.count

    def passed(self, parity: int) -> bool:
        return self.completed % 2 != parity


def simulate_ring(maps, stages: int, cluster: int, iterations: int, seed: int) -> None:
    """Producer (one per CTA), two consumer warpgroups per CTA and in-flight TMA copies,
    interleaved at random; raises AssertionError on a deadlock, on a consumer reading a
    stage filled for another k-iteration, or on a copy landing in a stage being read."""
    ring = {(s, it): (st, fp, ep) for s, it, st, fp, ep in maps["ring"]}
    (arrivals,) = [n for c, n in maps["empty_arrivals"] if c == cluster]
    rng = random.Random(seed)
    full = [[Barrier(1) for _ in range(stages)] for _ in range(cluster)]
    empty = [[Barrier(arrivals) for _ in range(stages)] for _ in range(cluster)]
    data = [[{} for _ in range(stages)] for _ in range(cluster)]  # part -> k-iteration
    readers = [[set() for _ in range(stages)] for _ in range(cluster)]
    copies: list[tuple] = []  # (cta, stage, part, it)

    def producer(cta):
        for it in range(iterations):
            s, _, ep = ring[(stages, it)]
            if it >= stages:
                while not empty[cta][s].passed(ep):
                    yield
            full[cta][s].arrive(expect_tx=3)  # A + two halves of B, one unit each
            copies.append((cta, s, "A", it))
            for half in range(2):
                if half % cluster == cta:  # multicast: to every CTA of the cluster
                    copies.extend((dst, s, f"B{half}", it) for dst in range(cluster))
            yield

    def consumer(cta, wg):
        for it in range(iterations):
            s, fp, _ = ring[(stages, it)]
            while not full[cta][s].passed(fp):
                yield
            assert data[cta][s] == {"A": it, "B0": it, "B1": it}, (cta, s, it, data[cta][s])
            readers[cta][s].add(wg)
            yield  # the MMAs run
            if it > 0:  # k-iteration it-1's MMAs retired: release its stage in every CTA
                prev = ring[(stages, it - 1)][0]
                readers[cta][prev].discard(wg)
                for dst in range(cluster):
                    empty[dst][prev].arrive()
        last = ring[(stages, iterations - 1)][0]
        readers[cta][last].discard(wg)
        for dst in range(cluster):
            empty[dst][last].arrive()

    tasks = [producer(c) for c in range(cluster)]
    tasks += [consumer(c, wg) for c in range(cluster) for wg in range(2)]
    live = list(range(len(tasks)))
    steps = 0
    while live or copies:
        steps += 1
        assert steps < 200_000, "no progress: the ring deadlocked"
        if copies and (not live or rng.random() < 0.4):
            cta, s, part, it = copies.pop(rng.randrange(len(copies)))
            assert not readers[cta][s], f"a copy for k-iteration {it} overwrote a stage being read"
            data[cta][s][part] = it
            full[cta][s].complete_tx(1)
            continue
        i = rng.choice(live)
        try:
            next(tasks[i])
        except StopIteration:
            live.remove(i)


@pytest.mark.parametrize("cluster", [1, 2])
@pytest.mark.parametrize("stages", [2, 3, 4])
def test_ring_never_deadlocks_or_overwrites_a_stage_being_read(maps, stages, cluster):
    for seed in range(25):
        simulate_ring(maps, stages, cluster, iterations=37, seed=seed)


def test_the_ring_model_catches_a_wrong_arrival_count(maps):
    """Sanity check of the simulation: with one arrival per CTA instead of one per consumer
    warpgroup, the producer refills a stage the other warpgroup still reads."""
    bad = dict(maps)
    bad["empty_arrivals"] = [(1, 1), (2, 2)]
    failures = 0
    for seed in range(25):
        try:
            simulate_ring(bad, 3, 1, iterations=37, seed=seed)
        except AssertionError:
            failures += 1
    assert failures > 0
