// Attention backward, FlashAttention-2 style (recomputation, no N x N matrix in memory):
// given Q, K, V, O's upstream gradient dO, the forward's row log-sum-exp LSE and
// Delta_i = sum_d dO_id O_id, compute
//   P = exp(scale Q K^T - LSE) [causal mask],  dV = P^T dO,  dP = dO V^T,
//   dS = P * (dP - Delta),  dQ = scale dS K,  dK = scale dS^T Q.
//
// Layouts: Q, dO, dQ (B*Hq, n_q, D); K, V, dK, dV (B*Hkv, n_kv, D), all contiguous 16-bit
// (bf16 or fp16); LSE, Delta (B*Hq, n_q) fp32 (natural log). Hq is a multiple of Hkv (GQA /
// MQA: query head h reads key/value head h / (Hq / Hkv)). D = 64 or 128. Causal masking is
// top-left aligned (query i sees keys j <= i), like the forward kernel and torch SDPA.
//
// Two kernels, so that neither needs atomics (deterministic sums):
//   attn_bwd_dkdv: one block of 4 warps per (64 keys, kv head); each warp owns 16 keys and
//     keeps dK, dV (16 x D fp32) in registers while it walks every query tile of every query
//     head of its group (causal: only tiles at or after the block's first key), streaming Q,
//     dO, LSE and Delta through a 2-stage cp.async pipeline. Per tile, in the transposed
//     orientation so that P^T and dS^T are accumulators reused as A operands:
//       S^T = K_w Q^T, P^T = 2^(S^T scale log2 e - LSE log2 e), dV += P^T dO,
//       dP^T = V_w dO^T, dS^T = P^T (dP^T - Delta), dK += dS^T Q.
//   attn_bwd_dq: one block per (64 queries, query head), as the forward: each warp owns 16
//     query rows and dQ (16 x D fp32), walking the key tiles it can see:
//       S = Q_w K^T, P = 2^(...), dP = dO_w V^T, dS = P (dP - Delta), dQ += dS K.
// Every product is an mma.sync m16n8k16 of the tile layer (tk_tiles.cuh), with the operand
// loaders and fragment maps tests/gpu/test_tile_layout.py checks against the PTX ISA; P and
// dS are rounded to 16 bits as A operands (as in FlashAttention-2). The public path uses
// these kernels only after their self-check passed on the device (iclr25/gpu/selfcheck.py).
#include "tk_tiles.cuh"

namespace {
constexpr int BKV = 64, WARPS = 4, THREADS = 32 * WARPS;
constexpr float LOG2E = 1.4426950408889634f;

// Tile sizes: with D = 128 the fp32 accumulators (dK and dV, or dQ) take 64-128 registers
// per thread, so the streamed tiles are narrower there, to stay free of spills.
template <class T, int D>
struct BwdTiles {
    static constexpr int BQ = D == 64 ? 64 : 16;     // query tile of the dK/dV kernel
    static constexpr int BKV_DQ = D == 64 ? 64 : 32;  // key tile of the dQ kernel
    using KV = tk::st<BKV, D>;     // 64 keys x D (dK/dV kernel)
    using Q = tk::st<BQ, D>;       // BQ queries x D (Q and dO in the dK/dV kernel)
    using Q64 = tk::st<64, D>;     // 64 queries x D (the dQ kernel)
    using KVq = tk::st<BKV_DQ, D>;  // key tiles of the dQ kernel
    // dK/dV: K, V resident; 2 stages of (Q, dO, LSE log2, Delta)
    static constexpr int kVecBytes = 2 * BQ * 4;
    static constexpr int kStageBytes = 2 * Q::kBytes + kVecBytes;
    static constexpr int kDkdvSmem = 2 * KV::kBytes + 2 * kStageBytes;
    // dQ: Q, dO resident; 2 stages of (K, V)
    static constexpr int kDqSmem = 2 * Q64::kBytes + 4 * KVq::kBytes;
};

// acc[M16 x N] += A (16 x K from a row-major [rows][K] tile at row a_row0) times B^T, B read
// from a row-major [N][K] tile: the S = X Y^T products (K = D).
template <class T, class ATile, class BTile, int N, int K>
__device__ __forceinline__ void mma_abt(float (&acc)[N / 8][4], tk::u32 a_base,
                                        const tk::quad_addr<ATile>& a_addr, int a_row0,
                                        tk::u32 b_base, const tk::pair_addr<BTile>& b_addr) {
#pragma unroll
    for (int j = 0; j < N / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[j][e] = 0.f;
#pragma unroll
    for (int kd = 0; kd < K / 16; ++kd) {
        tk::u32 a[4];
        tk::load_a<ATile>(a, a_addr, a_base, a_row0, kd * 16);
#pragma unroll
        for (int j = 0; j < N / 16; ++j) {
            tk::u32 b[4];
            tk::load_b_nk<BTile>(b, b_addr, b_base, j * 16, kd * 16);
            tk::dtype<T>::mma(acc[2 * j], a, b[0], b[1]);
            tk::dtype<T>::mma(acc[2 * j + 1], a, b[2], b[3]);
        }
    }
}

// out[16 x D] += X (16 x K, accumulators reused as the A operand) times B, B a row-major
// [K][D] tile: the dV += P^T dO, dK += dS^T Q, dQ += dS K products.
template <class T, class BTile, int K, int D>
__device__ __forceinline__ void mma_acc_b(float (&out)[D / 8][4], const float (&x)[K / 8][4],
                                          tk::u32 b_base, const tk::quad_addr<BTile>& b_addr) {
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
        tk::u32 a[4];
        tk::acc_to_a<T>(a, x[2 * kk], x[2 * kk + 1]);
#pragma unroll
        for (int d = 0; d < D / 16; ++d) {
            tk::u32 b[4];
            tk::load_b_kn<BTile>(b, b_addr, b_base, kk * 16, d * 16);
            tk::dtype<T>::mma(out[2 * d], a, b[0], b[1]);
            tk::dtype<T>::mma(out[2 * d + 1], a, b[2], b[3]);
        }
    }
}

// Store a 16 x D accumulator block (rows row_base.., all D columns) scaled by `scale`.
template <class T, int D>
__device__ __forceinline__ void store_rows(tk::u16* g, int rows, int row_base, float (&acc)[D / 8][4],
                                           float scale, int lane) {
#pragma unroll
    for (int d = 0; d < D / 8; ++d) {
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[d][e] *= scale;
        tk::store_acc<T>(g, D, rows, D, row_base, d * 8, acc[d], lane, true);
    }
}

// Copy n fp32 values (zero beyond `valid`) into shared memory, one per thread.
__device__ __forceinline__ void load_vec(float* dst, const float* src, int n, int valid, float mul,
                                         int tid) {
    for (int i = tid; i < n; i += THREADS) dst[i] = i < valid ? src[i] * mul : 0.f;
}

// --- dK, dV -------------------------------------------------------------------------------
template <class T, int D>
__device__ __forceinline__ void dkdv_body(const tk::u16* __restrict__ Q, const tk::u16* __restrict__ K,
                                          const tk::u16* __restrict__ V, const tk::u16* __restrict__ dO,
                                          const float* __restrict__ LSE, const float* __restrict__ Delta,
                                          tk::u16* __restrict__ dK, tk::u16* __restrict__ dV, int n_q,
                                          int n_kv, int heads_q, int heads_kv, float scale_log2,
                                          float scale, int causal) {
    using Tiles = BwdTiles<T, D>;
    constexpr int BQ = Tiles::BQ;
    using QT = typename Tiles::Q;
    using KVT = typename Tiles::KV;
    extern __shared__ __align__(128) unsigned char smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int kv0 = blockIdx.x * BKV;
    const tk::i64 bh_kv = blockIdx.y;
    const int group = heads_q / heads_kv;
    const tk::i64 bh_q0 = (bh_kv / heads_kv) * heads_q + (bh_kv % heads_kv) * group;
    const tk::u32 k_s = tk::smem_addr(smem), v_s = k_s + KVT::kBytes, stage_s = v_s + KVT::kBytes;
    float* stage_f = reinterpret_cast<float*>(smem + 2 * KVT::kBytes);  // generic view of stages

    tk::load_tile<KVT, THREADS>(k_s, K + bh_kv * n_kv * D, D, kv0, 0, n_kv, D, tid, true);
    tk::load_tile<KVT, THREADS>(v_s, V + bh_kv * n_kv * D, D, kv0, 0, n_kv, D, tid, true);
    const int first = causal ? kv0 / BQ : 0;  // query tiles before it see none of these keys
    const int q_tiles = (n_q + BQ - 1) / BQ, per_head = q_tiles > first ? q_tiles - first : 0;
    const int steps = group * per_head;
    auto load_step = [&](int stage, int step) {
        const tk::i64 bh = bh_q0 + step / per_head;
        const int q0 = (first + step % per_head) * BQ;
        const tk::u32 base = stage_s + stage * Tiles::kStageBytes;
        tk::load_tile<QT, THREADS>(base, Q + bh * n_q * D, D, q0, 0, n_q, D, tid, true);
        tk::load_tile<QT, THREADS>(base + QT::kBytes, dO + bh * n_q * D, D, q0, 0, n_q, D, tid, true);
        float* vec = stage_f + (stage * Tiles::kStageBytes + 2 * QT::kBytes) / 4;
        load_vec(vec, LSE + bh * n_q + q0, BQ, n_q - q0, LOG2E, tid);
        load_vec(vec + BQ, Delta + bh * n_q + q0, BQ, n_q - q0, 1.f, tid);
    };
    if (steps > 0) load_step(0, 0);
    tk::cp_async_commit();

    const tk::quad_addr<KVT> kv_quad(lane);
    const tk::pair_addr<QT> q_pair(lane);
    const tk::quad_addr<QT> q_quad(lane);
    float dk[D / 8][4], dv[D / 8][4];
    tk::zero(dk);
    tk::zero(dv);
    const int key_base = kv0 + warp * 16;
    for (int step = 0; step < steps; ++step) {
        tk::cp_async_wait<0>();
        __syncthreads();  // step landed (cp.async and the vector stores); step-1's stage is free
        if (step + 1 < steps) load_step((step + 1) & 1, step + 1);
        tk::cp_async_commit();
        const int q0 = (first + step % per_head) * BQ;
        const tk::u32 q_s = stage_s + (step & 1) * Tiles::kStageBytes, do_s = q_s + QT::kBytes;
        const float* lse2 = stage_f + ((step & 1) * Tiles::kStageBytes + 2 * QT::kBytes) / 4;
        const float* delta = lse2 + BQ;

        float pt[BQ / 8][4];  // S^T, then P^T (16 keys x BQ queries)
        mma_abt<T, KVT, QT, BQ, D>(pt, k_s, kv_quad, warp * 16, q_s, q_pair);
        const bool need_mask = q0 + BQ > n_q || (causal && q0 < key_base + 16);
#pragma unroll
        for (int j = 0; j < BQ / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int col = j * 8 + tk::layout::c_col(lane, e);
                const int key = key_base + tk::layout::c_row(lane, e), query = q0 + col;
                float p = exp2f(pt[j][e] * scale_log2 - lse2[col]);
                if (need_mask && (query >= n_q || (causal && key > query))) p = 0.f;
                pt[j][e] = p;
            }
        mma_acc_b<T, QT, BQ, D>(dv, pt, do_s, q_quad);  // dV += P^T dO
        float ds[BQ / 8][4];                            // dP^T, then dS^T
        mma_abt<T, KVT, QT, BQ, D>(ds, v_s, kv_quad, warp * 16, do_s, q_pair);
#pragma unroll
        for (int j = 0; j < BQ / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                ds[j][e] = pt[j][e] * (ds[j][e] - delta[j * 8 + tk::layout::c_col(lane, e)]);
        mma_acc_b<T, QT, BQ, D>(dk, ds, q_s, q_quad);  // dK += dS^T Q
    }
    tk::cp_async_wait<0>();
    store_rows<T, D>(dK + bh_kv * n_kv * D, n_kv, key_base, dk, scale, lane);
    store_rows<T, D>(dV + bh_kv * n_kv * D, n_kv, key_base, dv, 1.f, lane);
}

// --- dQ ------------------------------------------------------------------------------------
template <class T, int D>
__device__ __forceinline__ void dq_body(const tk::u16* __restrict__ Q, const tk::u16* __restrict__ K,
                                        const tk::u16* __restrict__ V, const tk::u16* __restrict__ dO,
                                        const float* __restrict__ LSE, const float* __restrict__ Delta,
                                        tk::u16* __restrict__ dQ, int n_q, int n_kv, int heads_q,
                                        int heads_kv, float scale_log2, float scale, int causal) {
    using Tiles = BwdTiles<T, D>;
    using QT = typename Tiles::Q64;
    using KVT = typename Tiles::KVq;
    constexpr int BKV = Tiles::BKV_DQ;
    extern __shared__ __align__(128) unsigned char smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int q_block = causal ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
    const int q0 = q_block * 64, row_base = q0 + warp * 16;
    const tk::i64 bh = blockIdx.y;
    const tk::i64 bh_kv = (bh / heads_q) * heads_kv + (bh % heads_q) / (heads_q / heads_kv);
    const tk::u16* k = K + bh_kv * n_kv * D;
    const tk::u16* v = V + bh_kv * n_kv * D;
    const tk::u32 q_s = tk::smem_addr(smem), do_s = q_s + QT::kBytes, kv_s = do_s + QT::kBytes;
    const int n_tiles = tk::layout::kv_tile_count(q0, 64, n_kv, BKV, causal);

    auto load_kv = [&](int stage, int t) {
        const tk::u32 base = kv_s + stage * 2 * KVT::kBytes;
        tk::load_tile<KVT, THREADS>(base, k, D, t * BKV, 0, n_kv, D, tid, true);
        tk::load_tile<KVT, THREADS>(base + KVT::kBytes, v, D, t * BKV, 0, n_kv, D, tid, true);
    };
    tk::load_tile<QT, THREADS>(q_s, Q + bh * n_q * D, D, q0, 0, n_q, D, tid, true);
    tk::load_tile<QT, THREADS>(do_s, dO + bh * n_q * D, D, q0, 0, n_q, D, tid, true);
    if (n_tiles > 0) load_kv(0, 0);
    tk::cp_async_commit();

    float lse2[2], delta[2];  // the thread's two rows
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int row = row_base + tk::layout::c_row(lane, 2 * h);
        lse2[h] = row < n_q ? LSE[bh * n_q + row] * LOG2E : 0.f;
        delta[h] = row < n_q ? Delta[bh * n_q + row] : 0.f;
    }
    const tk::quad_addr<QT> q_quad(lane);
    const tk::pair_addr<KVT> kv_pair(lane);
    const tk::quad_addr<KVT> kv_quad(lane);
    float dq[D / 8][4];
    tk::zero(dq);
    for (int t = 0; t < n_tiles; ++t) {
        tk::cp_async_wait<0>();
        __syncthreads();
        if (t + 1 < n_tiles) load_kv((t + 1) & 1, t + 1);
        tk::cp_async_commit();
        const tk::u32 k_s = kv_s + (t & 1) * 2 * KVT::kBytes, v_s = k_s + KVT::kBytes;
        const int kv0 = t * BKV;
        float p[BKV / 8][4];
        mma_abt<T, QT, KVT, BKV, D>(p, q_s, q_quad, warp * 16, k_s, kv_pair);  // S = Q K^T
        const bool need_mask = tk::layout::tile_needs_mask(kv0, BKV, n_kv, row_base, causal);
#pragma unroll
        for (int j = 0; j < BKV / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int col = kv0 + j * 8 + tk::layout::c_col(lane, e);
                const int row = row_base + tk::layout::c_row(lane, e);
                float x = exp2f(p[j][e] * scale_log2 - lse2[e >> 1]);
                if (row >= n_q || (need_mask && (col >= n_kv || (causal && col > row)))) x = 0.f;
                p[j][e] = x;
            }
        float ds[BKV / 8][4];
        mma_abt<T, QT, KVT, BKV, D>(ds, do_s, q_quad, warp * 16, v_s, kv_pair);  // dP = dO V^T
#pragma unroll
        for (int j = 0; j < BKV / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) ds[j][e] = p[j][e] * (ds[j][e] - delta[e >> 1]);
        mma_acc_b<T, KVT, BKV, D>(dq, ds, k_s, kv_quad);  // dQ += dS K
    }
    tk::cp_async_wait<0>();
    store_rows<T, D>(dQ + bh * n_q * D, n_q, row_base, dq, scale, lane);
}
}  // namespace

#define ICLR25_BWD_ARGS                                                                       \
    const tk::u16 *Q, const tk::u16 *K, const tk::u16 *V, const tk::u16 *dO, const float *LSE, \
        const float *Delta
#define ICLR25_BWD_ENTRY(SUFFIX, T, D)                                                          \
    extern "C" __global__ void __launch_bounds__(THREADS) attn_bwd_dkdv_##SUFFIX(               \
        ICLR25_BWD_ARGS, tk::u16* dK, tk::u16* dV, int n_q, int n_kv, int heads_q,              \
        int heads_kv, float scale_log2, float scale, int causal) {                               \
        dkdv_body<T, D>(Q, K, V, dO, LSE, Delta, dK, dV, n_q, n_kv, heads_q, heads_kv,           \
                        scale_log2, scale, causal);                                              \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(THREADS) attn_bwd_dq_##SUFFIX(                 \
        ICLR25_BWD_ARGS, tk::u16* dQ, int n_q, int n_kv, int heads_q, int heads_kv,             \
        float scale_log2, float scale, int causal) {                                             \
        dq_body<T, D>(Q, K, V, dO, LSE, Delta, dQ, n_q, n_kv, heads_q, heads_kv, scale_log2,     \
                      scale, causal);                                                            \
    }

ICLR25_BWD_ENTRY(bf16_d64, tk::bf16, 64)
ICLR25_BWD_ENTRY(bf16_d128, tk::bf16, 128)
ICLR25_BWD_ENTRY(f16_d64, tk::f16, 64)
ICLR25_BWD_ENTRY(f16_d128, tk::f16, 128)
