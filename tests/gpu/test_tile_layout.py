"""The tile layer's index maps, checked on the CPU against the PTX ISA.

``tile_probe.cu`` is compiled for the host with nvcc and prints the maps of
``iclr25/gpu/include/tk_tiles.cuh`` — the same functions the kernels call. This file holds
an independent model of the PTX ISA (section "Matrix Fragments for mma.m16n8k16 with
floating point type", and ldmatrix's "thread to row/element" mapping), simulates ldmatrix
and mma.sync on numpy arrays, and checks that

- every fragment map equals the ISA table for every lane and element;
- each operand loader (ldmatrix addresses + swizzled offsets) hands every lane exactly the
  elements the ISA says its fragment holds, for the tile shapes the kernels use;
- a warp tile computed through the fragments equals numpy's product;
- the accumulator -> A-operand reuse (FlashAttention's P) is element-exact;
- the swizzle is a bijection within each row and makes ldmatrix and cp.async conflict-free;
- the grouped block order is a bijection, and the causal kv-tile count matches brute force.
"""

from __future__ import annotations

import subprocess
from collections import defaultdict

import numpy as np
import pytest

from iclr25.gpu.compile import nvcc_path
from iclr25.gpu.registry import include_dir

pytestmark = pytest.mark.skipif(nvcc_path() is None, reason="nvcc not on PATH")
PROBE = __file__.replace("test_tile_layout.py", "tile_probe.cu")


@pytest.fixture(scope="module")
def maps(tmp_path_factory):
    exe = tmp_path_factory.mktemp("probe") / "tile_probe"
    cmd = [nvcc_path(), "-arch=sm_80", "-std=c++17", f"-I{include_dir()}", "-o", str(exe), PROBE]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    tables: dict[str, list[tuple[int, ...]]] = defaultdict(list)
    for line in out.splitlines():
        name, *values = line.split()
        tables[name].append(tuple(int(v) for v in values))
    return tables


# --- the PTX ISA model (written from the ISA text, not from tk_tiles.cuh) ----------------
def isa_a(lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    row = g if (i < 2 or 4 <= i < 6) else g + 8
    col = t * 2 + (i & 1) if i < 4 else t * 2 + (i & 1) + 8
    return row, col


def isa_b(lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    row = t * 2 + (i & 1) if i < 2 else t * 2 + (i & 1) + 8
    return row, g


def isa_c(lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    return (g if i < 2 else g + 8), t * 2 + (i & 1)


def ldmatrix_x4(smem: np.ndarray, row_offsets: list[int], trans: bool) -> np.ndarray:
    """ldmatrix.m8n8.x4(.trans): lanes 8q..8q+7 give the rows of matrix q (8 contiguous
    16-bit elements each); without .trans lane L receives row L/4, columns 2(L%4), +1 of each
    matrix, with .trans the elements at rows 2(L%4), +1 of column L/4. -> (32 lanes, 4, 2)."""
    regs = np.zeros((32, 4, 2), dtype=smem.dtype)
    for q in range(4):
        mat = np.stack([smem[off : off + 8] for off in row_offsets[8 * q : 8 * q + 8]])  # (8, 8)
        for lane in range(32):
            r, c = lane // 4, 2 * (lane % 4)
            regs[lane, q] = mat[c : c + 2, r] if trans else mat[r, c : c + 2]
    return regs


def a_fragment(matrix: np.ndarray) -> np.ndarray:
    """What the ISA says each lane's A registers hold for a 16 x 16 matrix: (32, 4, 2)."""
    out = np.zeros((32, 4, 2), dtype=matrix.dtype)
    for lane in range(32):
        for i in range(8):
            out[lane, i // 2, i % 2] = matrix[isa_a(lane, i)]
    return out


def b_fragment(matrix: np.ndarray) -> np.ndarray:
    """B registers of a 16 (k) x 8 (n) matrix: (32, 2, 2)."""
    out = np.zeros((32, 2, 2), dtype=matrix.dtype)
    for lane in range(32):
        for i in range(4):
            out[lane, i // 2, i % 2] = matrix[isa_b(lane, i)]
    return out


def mma(a_regs: np.ndarray, b_regs: np.ndarray) -> np.ndarray:
    """mma.m16n8k16 semantics: gather A and B from the fragments, D = A B, scatter to C."""
    a = np.zeros((16, 16))
    b = np.zeros((16, 8))
    for lane in range(32):
        for i in range(8):
            a[isa_a(lane, i)] = a_regs[lane, i // 2, i % 2]
        for i in range(4):
            b[isa_b(lane, i)] = b_regs[lane, i // 2, i % 2]
    d = a @ b
    return np.array([[d[isa_c(lane, i)] for i in range(4)] for lane in range(32)])


# --- helpers over the probe's tables -------------------------------------------------------
def swizzle(maps, cols: int):
    return {(r, c): off for w, r, c, off in maps["swz"] if w == cols}


def lane_offsets(maps, pattern: str, cols: int, row0: int, col0: int) -> list[int]:
    offset = swizzle(maps, cols)
    lanes = {lane: (r, c) for lane, r, c in maps[pattern]}
    return [offset[(row0 + lanes[lane][0], col0 + lanes[lane][1])] for lane in range(32)]


def tile_in_smem(maps, matrix: np.ndarray) -> np.ndarray:
    """Lay a (rows, cols) matrix out in shared memory with the probe's swizzle."""
    rows, cols = matrix.shape
    smem = np.zeros(rows * cols)
    for (r, c), off in swizzle(maps, cols).items():
        if r < rows:
            smem[off] = matrix[r, c]
    return smem


# --- 1. fragment maps ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("table", "model", "count"), [("a", isa_a, 8), ("b", isa_b, 4), ("c", isa_c, 4)]
)
def test_fragment_maps_equal_the_isa_tables(maps, table, model, count):
    got = {(lane, i): (r, c) for lane, i, r, c in maps[table]}
    assert len(got) == 32 * count
    for (lane, i), rc in got.items():
        assert rc == model(lane, i), (table, lane, i)
    # and they tile the matrix: every element is held by exactly one (lane, element)
    shape = {"a": (16, 16), "b": (16, 8), "c": (16, 8)}[table]
    assert sorted(got.values()) == [(r, c) for r in range(shape[0]) for c in range(shape[1])]


# --- 2. operand loaders ------------------------------------------------------------------
# (rows, cols) of tiles the kernels use: gemm A 128x32 and B 32x128; attention/linear
# attention Q, K, V and state tiles 64x64, 64x128 and 128x64.
TILES = [(128, 32), (32, 128), (64, 64), (64, 128), (128, 64)]


def blocks(rows: int, cols: int):
    return [(r0, c0) for r0 in range(0, rows, 16) for c0 in range(0, cols, 16)]


@pytest.mark.parametrize(("rows", "cols"), TILES)
def test_load_a_and_load_a_trans_give_isa_a_fragments(maps, rows, cols):
    rng = np.random.default_rng(rows * cols)
    tile = rng.normal(size=(rows, cols))
    smem = tile_in_smem(maps, tile)
    for r0, c0 in blocks(rows, cols):
        # load_a: ldsm x4 at (row0 + ldsm_row, col0 + ldsm_col) of an [M][K] tile
        got = ldmatrix_x4(smem, lane_offsets(maps, "ldsm", cols, r0, c0), trans=False)
        np.testing.assert_array_equal(got, a_fragment(tile[r0 : r0 + 16, c0 : c0 + 16]))
        # load_a_trans: ldsm x4.trans at (k0 + pair_row, m0 + pair_col) of a [K][M] tile
        got = ldmatrix_x4(smem, lane_offsets(maps, "ldsm_pair", cols, r0, c0), trans=True)
        np.testing.assert_array_equal(got, a_fragment(tile[r0 : r0 + 16, c0 : c0 + 16].T))


@pytest.mark.parametrize(("rows", "cols"), TILES)
def test_load_b_nk_and_load_b_kn_give_isa_b_fragments(maps, rows, cols):
    rng = np.random.default_rng(rows + cols)
    tile = rng.normal(size=(rows, cols))
    smem = tile_in_smem(maps, tile)
    for r0, c0 in blocks(rows, cols):
        # load_b_nk: tile is [N][K]; B = tile^T; regs 0,1 -> n-tile r0, regs 2,3 -> r0 + 8
        got = ldmatrix_x4(smem, lane_offsets(maps, "ldsm_pair", cols, r0, c0), trans=False)
        b = tile[r0 : r0 + 16, c0 : c0 + 16].T  # (k, n)
        np.testing.assert_array_equal(got[:, 0:2], b_fragment(b[:, 0:8]))
        np.testing.assert_array_equal(got[:, 2:4], b_fragment(b[:, 8:16]))
        # load_b_kn: tile is [K][N]; regs 0,1 -> n-tile c0, regs 2,3 -> c0 + 8 (ldmatrix.trans)
        got = ldmatrix_x4(smem, lane_offsets(maps, "ldsm", cols, r0, c0), trans=True)
        b = tile[r0 : r0 + 16, c0 : c0 + 16]
        np.testing.assert_array_equal(got[:, 0:2], b_fragment(b[:, 0:8]))
        np.testing.assert_array_equal(got[:, 2:4], b_fragment(b[:, 8:16]))


def test_warp_tile_product_through_fragments_equals_numpy(maps):
    """A 16 x 32 warp tile of A (16 x 64) @ B (64 x 32), the way gemm_bf16 runs it: A from an
    [M][K] tile with load_a, B from a [K][N] tile with load_b_kn, mma, then the C map."""
    rng = np.random.default_rng(3)
    a_tile, b_tile = rng.normal(size=(16, 64)), rng.normal(size=(64, 32))
    smem_a, smem_b = tile_in_smem(maps, a_tile), tile_in_smem(maps, b_tile)
    c_map = {(lane, i): (r, c) for lane, i, r, c in maps["c"]}
    out = np.zeros((16, 32))
    for n0 in range(0, 32, 16):
        acc = [np.zeros((32, 4)), np.zeros((32, 4))]
        for k0 in range(0, 64, 16):
            a = ldmatrix_x4(smem_a, lane_offsets(maps, "ldsm", 64, 0, k0), trans=False)
            b = ldmatrix_x4(smem_b, lane_offsets(maps, "ldsm", 32, k0, n0), trans=True)
            acc[0] += mma(a, b[:, 0:2])
            acc[1] += mma(a, b[:, 2:4])
        for j in range(2):
            for (lane, i), (r, c) in c_map.items():
                out[r, n0 + 8 * j + c] = acc[j][lane, i]
    np.testing.assert_allclose(out, a_tile @ b_tile, rtol=1e-12, atol=1e-12)


def test_accumulator_reuse_as_a_operand_is_exact(maps):
    """acc_to_a: a[0] = (c0[0], c0[1]), a[1] = (c0[2], c0[3]), a[2] = (c1[0], c1[1]),
    a[3] = (c1[2], c1[3]) must put S[r, 16j + c] where the A map expects it."""
    rng = np.random.default_rng(5)
    s = rng.normal(size=(16, 16))  # columns 0-7: n-tile 2j, 8-15: n-tile 2j + 1
    c_map = {(lane, i): (r, c) for lane, i, r, c in maps["c"]}
    c0 = np.array([[s[c_map[(lane, i)]] for i in range(4)] for lane in range(32)])
    c1 = np.array(
        [[s[c_map[(lane, i)][0], 8 + c_map[(lane, i)][1]] for i in range(4)] for lane in range(32)]
    )
    a_regs = np.stack([c0[:, 0:2], c0[:, 2:4], c1[:, 0:2], c1[:, 2:4]], axis=1)  # (32, 4, 2)
    np.testing.assert_array_equal(a_regs, a_fragment(s))


def test_lane_addr_equals_the_direct_swizzled_offsets(maps):
    """lane_addr (each lane's <= 4 precomputed offsets plus 64-column and row constants) must
    address exactly row0 + r, col_base + dcol + c of the swizzled tile, where (r, c) is the
    lane's ldmatrix row in quad or pair order — for every column base and block the kernels
    could use (a wrong slot would feed mma the wrong 8 x 8 matrix, silently)."""
    lanes = {
        1: {lane: (r, c) for lane, r, c in maps["ldsm"]},
        0: {lane: (r, c) for lane, r, c in maps["ldsm_pair"]},
    }
    offsets = {cols: swizzle(maps, cols) for cols in (16, 32, 64, 128)}
    seen = defaultdict(int)
    for rows, cols, quad, col_base, row0, dcol, lane, byte in maps["la"]:
        r, c = lanes[quad][lane]
        want = 2 * offsets[cols][(row0 + r, col_base + dcol + c)]
        assert byte == want, (rows, cols, quad, col_base, row0, dcol, lane)
        assert byte % 16 == 0  # ldmatrix rows are 16-byte aligned
        seen[(rows, cols)] += 1
    # the kernels' tiles: gemm A 128x32, B 32x128; attention / linear attention 64x64,
    # 64x128, state 128x64; and the narrow-tile branch
    assert set(seen) == {(128, 32), (32, 128), (64, 64), (64, 128), (128, 64), (16, 16)}


def test_tile_needs_mask_is_sound(maps):
    """When the attention kernel skips the mask for a warp's 16 rows x 64 keys, no element
    of that block may be masked: every key < n_kv and (causal) key <= every row."""
    assert len(maps["mask"]) > 500
    skipped = 0
    for causal, n_kv, kv0, row0, needs in maps["mask"]:
        masked = any(
            j >= n_kv or (causal and j > i)
            for i in range(row0, row0 + 16)
            for j in range(kv0, kv0 + 64)
        )
        assert needs or not masked, (causal, n_kv, kv0, row0)
        skipped += not needs
    assert skipped > 0  # the fast path is taken somewhere


# --- 3. swizzle ---------------------------------------------------------------------------
@pytest.mark.parametrize("cols", [8, 16, 32, 64, 128, 256, 512])
def test_swizzle_is_a_bijection_within_each_row_keeping_units_whole(maps, cols):
    offset = swizzle(maps, cols)
    for r in range(32):
        row = [offset[(r, c)] for c in range(cols)]
        assert sorted(row) == list(range(r * cols, (r + 1) * cols))
        for c in range(0, cols, 8):  # a 16-byte unit stays contiguous and in order
            assert row[c : c + 8] == list(range(row[c], row[c] + 8))


def bank_groups(element_offsets: list[int]) -> set[int]:
    """16-byte bank group (of 8 per 128-byte line) of each access."""
    return {(off * 2 // 16) % 8 for off in element_offsets}


@pytest.mark.parametrize("cols", [16, 32, 64, 128, 256])
def test_ldmatrix_phases_are_conflict_free(maps, cols):
    for pattern in ("ldsm", "ldsm_pair"):
        for r0 in range(0, 32, 16):
            for c0 in range(0, cols, 16):
                offs = lane_offsets(maps, pattern, cols, r0, c0)
                for q in range(4):  # one 8x8 matrix (8 rows of 16 bytes) per phase
                    assert len(bank_groups(offs[8 * q : 8 * q + 8])) == 8, (
                        pattern,
                        cols,
                        r0,
                        c0,
                        q,
                    )


@pytest.mark.parametrize("cols", [32, 64, 128, 256])
def test_cp_async_stores_are_conflict_free(maps, cols):
    """load_tile: thread t copies unit c = t + i * NT -> (row c / units, col 8 (c % units));
    each group of 8 consecutive threads must hit 8 different bank groups."""
    offset = swizzle(maps, cols)
    units = cols // 8
    for start in range(0, 32 * units, 8):
        offs = [offset[(c // units, 8 * (c % units))] for c in range(start, start + 8)]
        assert len(bank_groups(offs)) == 8, (cols, start)


# --- 4. grid-level maps -------------------------------------------------------------------
def test_grouped_tile_order_is_a_bijection_with_group_locality(maps):
    by_grid = defaultdict(list)
    for num_m, num_n, group, bid, tm, tn in maps["group"]:
        by_grid[(num_m, num_n, group)].append((bid, tm, tn))
    assert len(by_grid) == 7
    for (num_m, num_n, group), rows in by_grid.items():
        tiles = [(tm, tn) for _, tm, tn in sorted(rows)]
        assert sorted(tiles) == [(m, n) for m in range(num_m) for n in range(num_n)]
        width = group * num_n
        for start in range(0, len(tiles), width):  # one group touches <= `group` tile-rows
            assert len({tm for tm, _ in tiles[start : start + width]}) <= group


def test_kv_tile_count_matches_brute_force(maps):
    assert maps["kvt"]
    for causal, n_kv, q0, count in maps["kvt"]:
        needed = {j // 64 for q in range(q0, q0 + 64) for j in range(n_kv) if not causal or j <= q}
        assert needed == set(range(count)), (causal, n_kv, q0, count)
