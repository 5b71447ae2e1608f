// GEMM C = A @ B, 16-bit inputs (bf16 or fp16), fp32 accumulation, 16-bit output.
//
// A: (M, K) row-major, leading dimension lda; B: (K, N) row-major, ldb; C: (M, N), ldc.
// Block tile 128 x 128 x 32, 8 warps as 2 (M) x 4 (N), each warp a 64 x 32 register tile of
// 4 x 4 mma.sync.m16n8k16 accumulators. A 4-stage cp.async pipeline keeps three k-tiles in
// flight while one is multiplied. Blocks run in grouped order (8 tile-rows) for L2 reuse.
// Edges: rows, columns and k beyond the matrix are zero-filled on load and skipped on store,
// so any M, N, K >= 0 works; when lda/ldb are not multiples of 8 (16-byte rows impossible)
// tiles are loaded element by element (`vec_ok` = 0), correct but slower.
#include "tk_tiles.cuh"

namespace {
constexpr int BM = 128, BN = 128, BK = 32, STAGES = 4;
constexpr int WARPS_M = 2, WARPS_N = 4, THREADS = 32 * WARPS_M * WARPS_N;
constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // 64 x 32 per warp
constexpr int MT = WM / 16, NT = WN / 8;             // 4 m16 tiles x 4 n8 tiles
constexpr int GROUP_M = 8;
using TileA = tk::st<BM, BK>;  // 128 x 32 (64-byte rows)
using TileB = tk::st<BK, BN>;  // 32 x 128 (256-byte rows)
constexpr int STAGE_BYTES = TileA::kBytes + TileB::kBytes;
}  // namespace

template <class T>
__device__ __forceinline__ void gemm_stage_mma(float (&acc)[MT][NT][4], tk::u32 a_base,
                                               tk::u32 b_base, const tk::quad_addr<TileA>& a_addr,
                                               const tk::quad_addr<TileB>& b_addr, int warp_m) {
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
        tk::u32 b[NT / 2][4];
#pragma unroll
        for (int j = 0; j < NT / 2; ++j)
            tk::load_b_kn<TileB>(b[j], b_addr, b_base, kk, j * 16);
#pragma unroll
        for (int i = 0; i < MT; ++i) {
            tk::u32 a[4];
            tk::load_a<TileA>(a, a_addr, a_base, warp_m * WM + i * 16, kk);
#pragma unroll
            for (int j = 0; j < NT; ++j)
                tk::dtype<T>::mma(acc[i][j], a, b[j / 2][(j & 1) * 2], b[j / 2][(j & 1) * 2 + 1]);
        }
    }
}

template <class T>
__device__ __forceinline__ void gemm_body(const tk::u16* __restrict__ A, const tk::u16* __restrict__ B,
                                          tk::u16* __restrict__ C, int M, int N, int K, long long lda,
                                          long long ldb, long long ldc, int vec_ok, int pair_ok) {
    extern __shared__ __align__(128) unsigned char smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
    int tile_m, tile_n;
    tk::layout::grouped_tile(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, GROUP_M, tile_m,
                             tile_n);
    const int m0 = tile_m * BM, n0 = tile_n * BN;
    const tk::u32 base = tk::smem_addr(smem);
    const int k_tiles = (K + BK - 1) / BK;
    const tk::quad_addr<TileA> a_addr(lane);
    const tk::quad_addr<TileB> b_addr(lane, warp_n * WN);  // the warp's 32 columns of B

    auto load_stage = [&](int stage, int kt) {
        const tk::u32 a_base = base + stage * STAGE_BYTES;
        tk::load_tile<TileA, THREADS>(a_base, A, lda, m0, kt * BK, M, K, tid, vec_ok);
        tk::load_tile<TileB, THREADS>(a_base + TileA::kBytes, B, ldb, kt * BK, n0, K, N, tid,
                                      vec_ok);
    };

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i) tk::zero(acc[i]);

    // Prologue: k-tiles 0 .. STAGES-2 in flight, one commit group each (empty groups keep
    // the count uniform, so wait_group<STAGES-2> always means "k-tile kt has landed").
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles) load_stage(s, s);
        tk::cp_async_commit();
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
        tk::cp_async_wait<STAGES - 2>();
        __syncthreads();  // k-tile kt visible to all; every warp is done with k-tile kt-1
        const int next = kt + STAGES - 1;
        if (next < k_tiles) load_stage(next % STAGES, next);  // overwrites k-tile kt-1's stage
        tk::cp_async_commit();
        const tk::u32 a_base = base + (kt % STAGES) * STAGE_BYTES;
        gemm_stage_mma<T>(acc, a_base, a_base + TileA::kBytes, a_addr, b_addr, warp_m);
    }
    tk::cp_async_wait<0>();

#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
            tk::store_acc<T>(C, ldc, M, N, m0 + warp_m * WM + i * 16, n0 + warp_n * WN + j * 8,
                             acc[i][j], lane, pair_ok);
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
gemm_bf16(const tk::u16* A, const tk::u16* B, tk::u16* C, int M, int N, int K, long long lda,
          long long ldb, long long ldc, int vec_ok, int pair_ok) {
    gemm_body<tk::bf16>(A, B, C, M, N, K, lda, ldb, ldc, vec_ok, pair_ok);
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
gemm_f16(const tk::u16* A, const tk::u16* B, tk::u16* C, int M, int N, int K, long long lda,
         long long ldb, long long ldc, int vec_ok, int pair_ok) {
    gemm_body<tk::f16>(A, B, C, M, N, K, lda, ldb, ldc, vec_ok, pair_ok);
}
