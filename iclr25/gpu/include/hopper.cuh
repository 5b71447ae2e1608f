// hopper.cuh — the Hopper (sm_90a) primitives of the TMA + wgmma kernels.
//
//   1. index maps (host + device, printed by tests/gpu/hopper_probe.cu and checked on the CPU
//      by tests/gpu/test_hopper_layout.py against a model of the PTX ISA): the wgmma matrix
//      descriptor, the 128-byte swizzle TMA and wgmma share, the accumulator fragment, the
//      persistent tile scheduler and the ring's stage / phase arithmetic;
//   2. device primitives: mbarriers, TMA loads (optionally multicast to a cluster) and
//      stores, wgmma fences, named barriers, cluster barriers.
//
// Tensor maps reach the kernels by value (`const __grid_constant__ TensorMap`), so TMA reads
// them from the launch's parameter space: no map in global memory, no tensormap fence.
#pragma once
#include "common.cuh"

#define HP_HD __host__ __device__ __forceinline__
#define HP_DEV __device__ __forceinline__

namespace hopper {

typedef unsigned int u32;
typedef unsigned long long u64;

// The driver's CUtensorMap: 128 opaque bytes, 64-byte aligned (cuda.h is not included so the
// header stays free of toolkit includes, like tk_tiles.cuh).
struct alignas(64) TensorMap {
    u64 opaque[16];
};

// ---------------------------------------------------------------------------------------
// 1. Index maps (host + device)
// ---------------------------------------------------------------------------------------
namespace layout {

// wgmma matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address, leading and
// stride byte offsets, all >> 4 in 14-bit fields at bits 0, 16 and 32; swizzle mode in bits
// 62-63 (1 = 128-byte swizzle). Base offset (bits 49-51) stays 0: every atom is 1024-aligned.
HP_HD u64 smem_desc(u32 addr, u32 lbo, u32 sbo) {
    return (u64)((addr & 0x3FFFF) >> 4) | ((u64)((lbo & 0x3FFFF) >> 4) << 16) |
           ((u64)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

// The 128-byte swizzle of TMA and wgmma, a function of the shared-memory address: the 16-byte
// unit (bits 4-6) is XORed with the row within the 1024-byte atom (bits 7-9).
HP_HD u32 swizzle128(u32 addr) { return addr ^ (((addr >> 7) & 7u) << 4); }

// Operand tiles in shared memory, all built from 128-byte rows (64 16-bit elements):
//  K-major (A row-major, or B given as W^T with W row-major): `rows` rows of 64 k; a k16
//    step of wgmma advances the descriptor start by 32 bytes; SBO = 1024 (8-row atoms).
//  MN-major (B row-major, or A given as X^T): strips of 64 MN-elements x 64 k-rows (8 KiB
//    each, one TMA box); a k16 step advances by 16 rows = 2048 bytes; LBO = 8192 (strip to
//    strip along MN), SBO = 1024 (8 k-rows).
constexpr u32 ROW_BYTES = 128, ATOM_BYTES = 1024, STRIP_BYTES = 8192;
HP_HD u32 kmajor_k16_offset(int kk) { return (u32)kk * 32u; }
HP_HD u32 mnmajor_k16_offset(int kk) { return (u32)kk * 16u * ROW_BYTES; }
HP_HD u64 kmajor_desc(u32 base, int kk) { return smem_desc(base + kmajor_k16_offset(kk), 16, ATOM_BYTES); }
HP_HD u64 mnmajor_desc(u32 base, int kk) {
    return smem_desc(base + mnmajor_k16_offset(kk), STRIP_BYTES, ATOM_BYTES);
}

// The fp32 accumulator of wgmma m64nNk16 (PTX ISA, "Register fragment layout for the
// accumulator"): thread t of the warpgroup holds d[i], i < N/2, at row 16 (t / 32) +
// (t % 32) / 4 + 8 ((i / 2) % 2) and column 8 (i / 4) + 2 (t % 4) + i % 2.
HP_HD int acc_row(int t, int i) { return 16 * (t >> 5) + ((t & 31) >> 2) + 8 * ((i >> 1) & 1); }
HP_HD int acc_col(int t, int i) { return 8 * (i >> 2) + 2 * (t & 3) + (i & 1); }

// Byte offset of element (row, col) of a C slice staged for TMA stores: strips of 64
// columns, each `rows` x 128 bytes, 128-byte swizzled (the store box is 64 x rows).
HP_HD u32 staged_offset(int rows, int row, int col) {
    const u32 linear = (u32)(col >> 6) * (u32)rows * ROW_BYTES + (u32)row * ROW_BYTES +
                       (u32)(col & 63) * 2u;
    return swizzle128(linear);
}

// The GEMM's operand stages (gemm_hopper): A is a 128 (m) x 64 (k) tile, B 64 (k) x 256 (n).
// A "n" (K-major): one 64 x 128 box at offset 0. A "t" (M-major, read from the (K, M)
// matrix): two 64 (m) x 64 (k-row) strips. B in two halves of 128 columns (one per CTA of a
// 2-CTA cluster), each at half * 16 KiB: B "t" (K-major, read from the (N, K) matrix W) one
// 64 (k) x 128 (n-row) box; B "n" (N-major) two 64 (n) x 64 (k-row) strips. (c0, c1) are the
// box's TMA coordinates: column then row of the matrix as stored.
struct Box {
    u32 dst;  // byte offset in the operand's stage buffer
    int c0, c1;
};
constexpr u32 GEMM_A_BYTES = 128 * 64 * 2, GEMM_B_BYTES = 64 * 256 * 2;
HP_HD int gemm_a_boxes(bool a_t) { return a_t ? 2 : 1; }
HP_HD Box gemm_a_box(bool a_t, int j, int m0, int k0) {
    return a_t ? Box{(u32)j * STRIP_BYTES, m0 + 64 * j, k0} : Box{0u, k0, m0};
}
HP_HD int gemm_b_boxes_per_half(bool b_t) { return b_t ? 1 : 2; }
HP_HD Box gemm_b_box(bool b_t, int half, int j, int n0, int k0) {
    const u32 dst = (u32)half * (GEMM_B_BYTES / 2) + (u32)j * STRIP_BYTES;
    return b_t ? Box{dst, k0, n0 + 128 * half} : Box{dst, n0 + 128 * half + 64 * j, k0};
}
// Consumer warpgroup c's 64-row slice of the A stage, and the k16 descriptors of A and B.
HP_HD u32 gemm_a_slice(bool a_t, int consumer) {
    return (u32)consumer * (a_t ? STRIP_BYTES : 64u * ROW_BYTES);
}
HP_HD u64 gemm_a_desc(bool a_t, u32 a_base, int kk) {
    return a_t ? mnmajor_desc(a_base, kk) : kmajor_desc(a_base, kk);
}
HP_HD u64 gemm_b_desc(bool b_t, u32 b_base, int kk) {
    return b_t ? kmajor_desc(b_base, kk) : mnmajor_desc(b_base, kk);
}

// Attention (attention_hopper): Q, K and V tiles are stored as panels of 64 head-dim
// columns (128 bytes per row, one TMA box each): Q 128 rows per panel, K and V `bkv` rows.
// S = Q K^T reads Q (A) and K (B) K-major, a k16 step being 32 bytes within a panel and the
// next panel after four; O += P V reads V (B) MN-major: a k16 step over keys advances 16
// rows (2048 bytes), LBO = one panel (bkv x 128 bytes) between 64-column strips of d.
constexpr u32 ATTN_Q_ROWS = 128;
HP_HD u32 attn_panel_bytes(int rows) { return (u32)rows * ROW_BYTES; }
HP_HD u64 attn_q_desc(u32 q_base, int consumer, int kk) {
    return kmajor_desc(q_base + (u32)(kk >> 2) * attn_panel_bytes(ATTN_Q_ROWS) + (u32)consumer * 64u * ROW_BYTES,
                       kk & 3);
}
HP_HD u64 attn_k_desc(u32 k_base, int bkv, int kk) {
    return kmajor_desc(k_base + (u32)(kk >> 2) * attn_panel_bytes(bkv), kk & 3);
}
HP_HD u64 attn_v_desc(u32 v_base, int bkv, int kk) {
    return smem_desc(v_base + mnmajor_k16_offset(kk), attn_panel_bytes(bkv), ATOM_BYTES);
}

// Persistent scheduler: work item w (w = blockIdx.x / CLUSTER, + gridDim.x / CLUSTER per
// round) is tile-pair w in grouped order over a (ceil(num_m / CLUSTER) x num_n) grid; the
// CTA of cluster rank r takes tile row CLUSTER * pair_m + r. Rows >= num_m (an odd tile-row
// count with CLUSTER = 2) are phantom tiles: loaded as zeros, never stored (TMA clips).
HP_HD void grouped_tile(int w, int num_m, int num_n, int group, int& tile_m, int& tile_n) {
    const int width = group * num_n;
    const int first_m = (w / width) * group;
    const int rows = (num_m - first_m) < group ? (num_m - first_m) : group;
    const int local = w % width;
    tile_m = first_m + local % rows;
    tile_n = local / rows;
}
HP_HD void cluster_tile(int w, int num_m, int num_n, int group, int cluster, int rank,
                        int& tile_m, int& tile_n) {
    int pair_m;
    grouped_tile(w, (num_m + cluster - 1) / cluster, num_n, group, pair_m, tile_n);
    tile_m = cluster * pair_m + rank;
}
HP_HD int work_items(int num_m, int num_n, int cluster) {
    return ((num_m + cluster - 1) / cluster) * num_n;
}

// The ring: k-iteration `it` (counted across every tile a block processes) uses stage
// it % STAGES; its "full" barrier completes phase (it / STAGES) for the (it / STAGES)-th time,
// so consumers wait on parity (it / STAGES) & 1, and the producer, refilling a stage its
// consumers released once per round, waits on the "empty" parity ((it / STAGES) & 1) ^ 1
// from the second round on.
// Arrivals that complete one phase of a stage's "empty" barrier: every consumer warpgroup of
// every CTA of the cluster (the stage receives multicast data from each of them).
HP_HD int empty_arrivals(int consumers, int cluster) { return consumers * cluster; }
HP_HD int ring_stage(long long it, int stages) { return (int)(it % stages); }
HP_HD int full_parity(long long it, int stages) { return (int)((it / stages) & 1); }
HP_HD int empty_parity(long long it, int stages) { return (int)(((it / stages) & 1) ^ 1); }

}  // namespace layout

// ---------------------------------------------------------------------------------------
// 2. Device primitives (sm_90a)
// ---------------------------------------------------------------------------------------
HP_DEV u32 smem_addr(const void* p) { return (u32)__cvta_generic_to_shared(p); }

HP_DEV void mbar_init(u32 bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
HP_DEV void mbar_expect_tx(u32 bar, int bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}
HP_DEV void mbar_arrive(u32 bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// Arrive on the barrier at the same offset in the shared memory of cluster rank `rank`.
HP_DEV void mbar_arrive_cluster(u32 bar, u32 rank) {
    asm volatile(
        "{\n.reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}" ::"r"(bar),
        "r"(rank)
        : "memory");
}
HP_DEV void mbar_wait(u32 bar, int parity) {
    asm volatile(
        "{\n.reg .pred P1;\nWAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
        "@P1 bra DONE_%=;\nbra WAIT_%=;\nDONE_%=:\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}

HP_DEV void prefetch_map(const TensorMap& map) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(&map)) : "memory");
}
// 2-D TMA load of the box at (c0 = column, c1 = row) into dst, completing on bar.
HP_DEV void tma_load(u32 dst, const TensorMap& map, u32 bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
        "l"(reinterpret_cast<u64>(&map)), "r"(bar), "r"(c0), "r"(c1)
        : "memory");
}
// The same box written to dst and signalled on bar in every CTA of the cluster in `mask`.
HP_DEV void tma_load_multicast(u32 dst, const TensorMap& map, u32 bar, int c0, int c1,
                               unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(dst),
        "l"(reinterpret_cast<u64>(&map)), "r"(bar), "r"(c0), "r"(c1), "h"(mask)
        : "memory");
}
// 3-D TMA load (c0 = column, c1 = row, c2 = matrix index, e.g. batch x head).
HP_DEV void tma_load_3d(u32 dst, const TensorMap& map, u32 bar, int c0, int c1, int c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(dst),
        "l"(reinterpret_cast<u64>(&map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
        : "memory");
}
// Keep the compiler from moving reads or writes of registers an asynchronous wgmma uses
// across a wgmma fence or wait (CUTLASS's warpgroup_fence_operand).
template <int N>
HP_DEV void fence_operands(float (&r)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
HP_DEV void fence_operands(u32 (&r)[N][4]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) asm volatile("" : "+r"(r[i][j])::"memory");
}

// 2-D TMA store of the staged box at src to (c0, c1); elements outside the matrix are dropped.
HP_DEV void tma_store(const TensorMap& map, u32 src, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
            reinterpret_cast<u64>(&map)),
        "r"(src), "r"(c0), "r"(c1)
        : "memory");
}
HP_DEV void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Wait until the shared memory of every committed store has been read (it may be reused).
HP_DEV void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
// Wait until every committed store has completed.
HP_DEV void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
// Make this thread's generic-proxy shared-memory writes visible to TMA (the async proxy).
HP_DEV void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

HP_DEV void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
HP_DEV void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
HP_DEV void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Named barrier `id` (1..15; 0 is __syncthreads) over `threads` threads.
HP_DEV void named_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
HP_DEV void named_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

HP_DEV u32 cluster_rank() {
    u32 r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
// Every thread of every CTA in the cluster (release / acquire ordering of shared memory).
HP_DEV void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::
                     : "memory");
}

HP_DEV void setmaxnreg_dec40() { asm volatile("setmaxnreg.dec.sync.aligned.u32 40;"); }
HP_DEV void setmaxnreg_inc232() { asm volatile("setmaxnreg.inc.sync.aligned.u32 232;"); }
HP_DEV void setmaxnreg_inc240() { asm volatile("setmaxnreg.inc.sync.aligned.u32 240;"); }
HP_DEV void setmaxnreg_dec24() { asm volatile("setmaxnreg.dec.sync.aligned.u32 24;"); }

}  // namespace hopper
