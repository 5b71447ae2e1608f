// tk_tiles.cuh — a small tile layer in the spirit of ThunderKittens (Spector et al., ICLR 2025).
//
// Three levels, as in the paper:
//   warp  : 16x16 register tiles held as mma.sync.m16n8k16 fragments (bf16/fp16 in, fp32 acc),
//           loaded from shared memory with ldmatrix (plain or transposed);
//   block : shared tiles of 16-bit elements with an XOR swizzle of 16-byte units, filled with
//           cp.async (zero-filled outside the matrix) and staged in commit/wait groups;
//   grid  : a grouped block order (GROUP_M tile-rows share their B tiles in L2).
//
// No toolkit header is included: 16-bit values are raw bits and conversions are PTX, so the
// same source compiles under nvcc and NVRTC (CuPy) alike. Everything needs sm_80 or newer.
//
// The index maps (section 1) are __host__ __device__ so tests/gpu/tile_probe.cu can print them
// on a machine without a GPU; tests/gpu/test_tile_layout.py checks them against the PTX ISA
// fragment tables ("Matrix Fragments for mma.m16n8k16 with floating point type", and the
// ldmatrix thread/element mapping) by simulating ldmatrix and mma on the CPU.
#pragma once
#include "common.cuh"

#define TK_HD __host__ __device__ __forceinline__
#define TK_DEV __device__ __forceinline__

namespace tk {

typedef unsigned short u16;
typedef unsigned int u32;
typedef long long i64;

// ---------------------------------------------------------------------------------------
// 1. Index maps (host + device)
// ---------------------------------------------------------------------------------------
namespace layout {

TK_HD constexpr int group_id(int lane) { return lane >> 2; }         // PTX "groupID"
TK_HD constexpr int thread_in_group(int lane) { return lane & 3; }   // "threadID_in_group"

// A fragment (16 x 16, row-major), element i = 0..7 lives in register i/2, half i%2.
TK_HD constexpr int a_row(int lane, int i) { return group_id(lane) + (((i >> 1) & 1) << 3); }
TK_HD constexpr int a_col(int lane, int i) {
    return thread_in_group(lane) * 2 + (i & 1) + ((i >> 2) << 3);
}
// B fragment (16 x 8, K x N), element i = 0..3 in register i/2, half i%2.
TK_HD constexpr int b_row(int lane, int i) {
    return thread_in_group(lane) * 2 + (i & 1) + ((i >> 1) << 3);
}
TK_HD constexpr int b_col(int lane, int /*i*/) { return group_id(lane); }
// C/D fragment (16 x 8 fp32), element i = 0..3.
TK_HD constexpr int c_row(int lane, int i) { return group_id(lane) + ((i >> 1) << 3); }
TK_HD constexpr int c_col(int lane, int i) { return thread_in_group(lane) * 2 + (i & 1); }

// ldmatrix.x4 row addresses: lane L points at row ldsm_row(L), column ldsm_col(L) of the
// 16 x 16 block being loaded. "quad" order (matrix q = L / 8): rows 0-7|8-15 x cols 0|8.
TK_HD constexpr int ldsm_row(int lane) { return lane & 15; }
TK_HD constexpr int ldsm_col(int lane) { return (lane >> 4) << 3; }
// "pair" order: matrices (rows 0-7, col 0), (rows 0-7, col 8), (rows 8-15, col 0), (8-15, 8).
TK_HD constexpr int ldsm_pair_row(int lane) { return ((lane >> 4) << 3) + (lane & 7); }
TK_HD constexpr int ldsm_pair_col(int lane) { return ((lane >> 3) & 1) << 3; }

// XOR swizzle of the 16-byte units of a row of COLS 16-bit elements. Eight consecutive rows
// read at the same logical unit land in eight different 16-byte bank groups, which is what
// ldmatrix (8 rows x 16 bytes per matrix) and 8 threads of cp.async need to be conflict-free.
TK_HD constexpr int swizzle_unit(int cols, int row, int unit) {
    return unit ^ ((row / ((cols / 8) >= 8 ? 1 : 8 / (cols / 8))) &
                   (((cols / 8) >= 8 ? 8 : (cols / 8)) - 1));
}
TK_HD constexpr int swizzle_offset(int cols, int row, int col) {
    return row * cols + (swizzle_unit(cols, row, col >> 3) << 3) + (col & 7);
}

// Grouped block order: block `bid` of a (num_m x num_n) tile grid -> (tile_m, tile_n).
// Consecutive blocks walk down `group` tile-rows before moving right, so the B tiles they
// share are still in L2. A bijection of [0, num_m * num_n).
TK_HD void grouped_tile(int bid, int num_m, int num_n, int group, int& tile_m, int& tile_n) {
    const int width = group * num_n;
    const int first_m = (bid / width) * group;
    const int rows = (num_m - first_m) < group ? (num_m - first_m) : group;
    const int local = bid % width;
    tile_m = first_m + local % rows;
    tile_n = local / rows;
}

// Number of key/value tiles a query block [q0, q0 + block_q) must visit. Causal masking is
// top-left aligned (query i sees keys j <= i), as in torch's scaled_dot_product_attention.
TK_HD int kv_tile_count(int q0, int block_q, int n_kv, int block_kv, bool causal) {
    int keys = n_kv;
    if (causal && q0 + block_q < keys) keys = q0 + block_q;
    return (keys + block_kv - 1) / block_kv;
}

// Whether the key tile [kv0, kv0 + block_kv) needs the per-element mask for query rows
// [row0, row0 + 16): some key lies beyond n_kv, or (causal) after the first row. When this
// is false no element of the 16 x block_kv score block is masked (checked by brute force).
TK_HD bool tile_needs_mask(int kv0, int block_kv, int n_kv, int row0, bool causal) {
    return kv0 + block_kv > n_kv || (causal && kv0 + block_kv - 1 > row0);
}

}  // namespace layout

// ---------------------------------------------------------------------------------------
// 2. Element types: raw 16-bit bits, conversions in PTX
// ---------------------------------------------------------------------------------------
struct bf16 {};
struct f16 {};

template <class T>
struct dtype;

template <>
struct dtype<bf16> {
    // {hi, lo} packed so that `lo` is the lower 16 bits (the lower-index element)
    TK_DEV static u32 pack(float lo, float hi) {
        u32 r;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
    }
    TK_DEV static float to_float(u16 x) { return __uint_as_float(((u32)x) << 16); }
    TK_DEV static u16 from_float(float x) {
        u16 r;
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
        return r;
    }
    TK_DEV static void mma(float (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
            "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

template <>
struct dtype<f16> {
    TK_DEV static u32 pack(float lo, float hi) {
        u32 r;
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
    }
    TK_DEV static float to_float(u16 x) {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x));
        return f;
    }
    TK_DEV static u16 from_float(float x) {
        u16 r;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(x));
        return r;
    }
    TK_DEV static void mma(float (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
            "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

// ---------------------------------------------------------------------------------------
// 3. Shared memory: addresses, ldmatrix, cp.async
// ---------------------------------------------------------------------------------------
TK_DEV u32 smem_addr(const void* p) {
    u32 r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}

TK_DEV void ldsm_x4(u32 (&r)[4], u32 addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

TK_DEV void ldsm_x4_trans(u32 (&r)[4], u32 addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

TK_DEV void st_shared_u32(u32 addr, u32 v) {
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

TK_DEV void st_shared_v4(u32 addr, u32 a, u32 b, u32 c, u32 d) {
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(a), "r"(b), "r"(c),
                 "r"(d)
                 : "memory");
}

// 16-byte async copy global -> shared; bytes beyond `src_bytes` (0..16) are zero-filled.
TK_DEV void cp_async_16(u32 dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}
TK_DEV void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
TK_DEV void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// A ROWS x COLS shared tile of 16-bit elements, swizzled (see layout::swizzle_unit).
template <int ROWS, int COLS>
struct st {
    static constexpr int kRows = ROWS, kCols = COLS, kUnits = COLS / 8;
    static constexpr int kElems = ROWS * COLS, kBytes = kElems * 2;
    static_assert(COLS % 8 == 0 && (kUnits & (kUnits - 1)) == 0, "COLS/8 must be a power of 2");
    static_assert(ROWS % 16 == 0, "ROWS must be a multiple of 16");
    TK_HD static constexpr int offset(int row, int col) {
        return layout::swizzle_offset(COLS, row, col);
    }
    TK_DEV static u32 addr(u32 base, int row, int col) { return base + 2u * offset(row, col); }
};

// Fill tile `Tile` at shared address `base` from rows [row0, row0 + ROWS) and columns
// [col0, col0 + COLS) of a row-major global matrix g (leading dimension ld) whose valid
// extent is nrows x ncols; everything outside is zero. `vec_ok` says g and ld allow 16-byte
// copies (g 16-byte aligned, ld % 8 == 0): then cp.async with zero-fill, else element loads.
// Every thread of the block calls it; thread `tid` copies units tid, tid + NT, ...
template <class Tile, int NT>
TK_DEV void load_tile(u32 base, const u16* g, i64 ld, int row0, int col0, int nrows, int ncols,
                      int tid, bool vec_ok) {
    constexpr int kChunks = Tile::kRows * Tile::kUnits;
#pragma unroll
    for (int i = 0; i < (kChunks + NT - 1) / NT; ++i) {
        const int c = tid + i * NT;
        if (kChunks % NT != 0 && c >= kChunks) break;
        const int r = c / Tile::kUnits, col = (c % Tile::kUnits) * 8;
        const int gr = row0 + r, gc = col0 + col;
        const u32 dst = Tile::addr(base, r, col);
        if (vec_ok) {
            int valid = (gr < nrows) ? ncols - gc : 0;
            valid = valid < 0 ? 0 : (valid > 8 ? 8 : valid);
            const u16* src = valid > 0 ? g + gr * ld + gc : g;
            cp_async_16(dst, src, valid * 2);
        } else {
            u32 w[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const bool row_ok = gr < nrows;
                const u32 lo = (row_ok && gc + 2 * e < ncols) ? g[gr * ld + gc + 2 * e] : 0u;
                const u32 hi = (row_ok && gc + 2 * e + 1 < ncols) ? g[gr * ld + gc + 2 * e + 1] : 0u;
                w[e] = lo | (hi << 16);
            }
            st_shared_v4(dst, w[0], w[1], w[2], w[3]);
        }
    }
}

// ---------------------------------------------------------------------------------------
// 4. Warp-level register tiles
// ---------------------------------------------------------------------------------------
// Per-lane ldmatrix addresses of a tile, precomputed once. The swizzle depends on the row
// only through row % 8 and on the column only through col % 64, so
//   offset(row0 + r, x + 64 m) = row0 * COLS + 64 m + offset(r, x)   (row0 % 8 == 0)
// (tests/gpu/test_tile_layout.py checks lane_addr itself, host-compiled, against the direct
// offsets for every tile shape, column base and block the kernels use). A lane keeps <= 4
// offsets, for the column blocks col_base + 16 k, and every block address is one of them
// plus a constant, instead of one register per unrolled block. col_base may be a run-time value (a warp's column
// offset); the column argument of operator() must be a compile-time multiple of 16.
// QUAD: lanes address rows ldsm_row, cols ldsm_col (A operands, B from [K][N]);
// otherwise rows ldsm_pair_row, cols ldsm_pair_col (A from [K][M], B from [N][K]).
template <class Tile, bool QUAD>
struct lane_addr {
    static constexpr int kSlots = Tile::kCols >= 64 ? 4 : Tile::kCols / 16;
    u32 off[kSlots];
    TK_HD explicit lane_addr(int lane, int col_base = 0) {
        const int r = QUAD ? layout::ldsm_row(lane) : layout::ldsm_pair_row(lane);
        const int c = QUAD ? layout::ldsm_col(lane) : layout::ldsm_pair_col(lane);
#pragma unroll
        for (int k = 0; k < kSlots; ++k) off[k] = 2u * Tile::offset(r, col_base + 16 * k + c);
    }
    // block (row0, col_base + dcol): row0 % 16 == 0, dcol a compile-time multiple of 16
    TK_HD u32 operator()(u32 base, int row0, int dcol) const {
        return base + 2u * (row0 * Tile::kCols + 64 * (dcol / 64)) + off[(dcol % 64) / 16];
    }
};
template <class Tile>
using quad_addr = lane_addr<Tile, true>;
template <class Tile>
using pair_addr = lane_addr<Tile, false>;

// A operand, 16 x 16 block at (row0, col0) of a row-major [M][K] tile.
template <class Tile>
TK_DEV void load_a(u32 (&a)[4], const quad_addr<Tile>& la, u32 base, int row0, int col0) {
    ldsm_x4(a, la(base, row0, col0));
}
// A operand from a [K][M] tile (the transpose is what is multiplied): block (k0, m0).
template <class Tile>
TK_DEV void load_a_trans(u32 (&a)[4], const pair_addr<Tile>& la, u32 base, int k0, int m0) {
    ldsm_x4_trans(a, la(base, k0, m0));
}
// Two B operands (n-tiles n0 and n0 + 8, k16 from k0) of a [N][K] tile:
// b[0], b[1] belong to n-tile n0 and b[2], b[3] to n-tile n0 + 8.
template <class Tile>
TK_DEV void load_b_nk(u32 (&b)[4], const pair_addr<Tile>& la, u32 base, int n0, int k0) {
    ldsm_x4(b, la(base, n0, k0));
}
// The same two B operands from a [K][N] tile (block (k0, n0)), via ldmatrix.trans.
template <class Tile>
TK_DEV void load_b_kn(u32 (&b)[4], const quad_addr<Tile>& la, u32 base, int k0, int n0) {
    ldsm_x4_trans(b, la(base, k0, n0));
}

// Accumulators of two neighbouring n-tiles (columns 16j..16j+7 and 16j+8..16j+15) as the
// A operand of the next mma (FlashAttention's P = softmax(S) reuse): see c_* and a_* maps.
template <class T>
TK_DEV void acc_to_a(u32 (&a)[4], const float (&c0)[4], const float (&c1)[4]) {
    a[0] = dtype<T>::pack(c0[0], c0[1]);
    a[1] = dtype<T>::pack(c0[2], c0[3]);
    a[2] = dtype<T>::pack(c1[0], c1[1]);
    a[3] = dtype<T>::pack(c1[2], c1[3]);
}

template <int N>
TK_DEV void zero(float (&acc)[N][4]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][e] = 0.f;
}

// Reductions over the four threads that share a fragment row (lanes 4g .. 4g + 3).
TK_DEV float quad_max(float v) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
    return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
TK_DEV float quad_sum(float v) {
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// Store a 16 x 8 accumulator at (row0, col0) of a row-major global matrix (rows x cols valid,
// leading dimension ld) as T; pairs are written as one 32-bit store when `pair_ok`.
template <class T>
TK_DEV void store_acc(u16* g, i64 ld, int rows, int cols, int row0, int col0, const float (&c)[4],
                      int lane, bool pair_ok) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int r = row0 + layout::c_row(lane, 2 * h), col = col0 + layout::c_col(lane, 2 * h);
        if (r >= rows) continue;
        if (pair_ok && col + 1 < cols) {
            *reinterpret_cast<u32*>(g + r * ld + col) = dtype<T>::pack(c[2 * h], c[2 * h + 1]);
        } else {
            if (col < cols) g[r * ld + col] = dtype<T>::from_float(c[2 * h]);
            if (col + 1 < cols) g[r * ld + col + 1] = dtype<T>::from_float(c[2 * h + 1]);
        }
    }
}

}  // namespace tk
