// Causal linear attention, chunked, with an optional per-head decay (the form of
// ThunderKittens' linear-attention kernel and Lightning Attention-2):
//
//     o_i = sum_{j <= i} lambda_h^(i - j) (q_i . k_j) v_j,     lambda_h = exp(-slope_h)
//
// (slope_h = 0, or a null `slopes`, is plain causal linear attention). With chunks of C = 64
// positions starting at t0, and the state S = sum_{j < t0} lambda^(t0 - 1 - j) k_j v_j^T
// (DK x DV), row i of the chunk is
//     o_(t0+i) = lambda^(i+1) q_(t0+i) S                                  (inter-chunk)
//              + sum_{j <= i} lambda^(i-j) (q_(t0+i) . k_(t0+j)) v_(t0+j)  (intra-chunk)
// and S <- lambda^C S + sum_j lambda^(C-1-j) k_(t0+j) v_(t0+j)^T.
//
// Q, K: (B*H, N, DK) and V, O: (B*H, N, DV), contiguous 16-bit; slopes: (H,) fp32 or null.
// One block of 4 warps per (head, 64 columns of V). Warp w computes output rows 16w..16w+15
// of each chunk (skipping key tiles above the diagonal) and owns rows [w DK/4, (w+1) DK/4)
// of the fp32 state in registers; a 16-bit copy of the state in shared memory feeds Q S.
// The powers lambda^d, d = 0..C, are a table in shared memory (looked up, not recomputed:
// per-element exp2 of loop-invariant exponents would be hoisted into ~90 live registers).
// Q, K, V chunks arrive through a 2-stage cp.async pipeline. DK = 64 or 128, DV % 8 == 0,
// any N: positions beyond N are zero-filled and not stored.
#include "tk_tiles.cuh"

namespace {
constexpr int C = 64, BDV = 64, WARPS = 4, THREADS = 32 * WARPS;
constexpr float LOG2E = 1.4426950408889634f;
}  // namespace

template <int DK>
struct LinTiles {
    using QK = tk::st<C, DK>;
    using V = tk::st<C, BDV>;
    using S = tk::st<DK, BDV>;
    static constexpr int kStageBytes = 2 * QK::kBytes + V::kBytes;  // Q, K, V of one chunk
    static constexpr int kPowBytes = 4 * (C + 16);                  // lambda^0 .. lambda^C
    static constexpr int kSmemBytes = 2 * kStageBytes + S::kBytes + kPowBytes;
};

// O_w = lambda^(i+1) Q_w S_prev  (skipped for the first chunk, where S = 0).
template <class T, int DK>
__device__ __forceinline__ void lin_inter(float (&o)[BDV / 8][4], tk::u32 q_base,
                                          const tk::quad_addr<typename LinTiles<DK>::QK>& q_addr,
                                          tk::u32 s_base,
                                          const tk::quad_addr<typename LinTiles<DK>::S>& s_addr,
                                          const float* lam_pow, int warp, int lane) {
    using QK = typename LinTiles<DK>::QK;
    using S = typename LinTiles<DK>::S;
#pragma unroll
    for (int kd = 0; kd < DK / 16; ++kd) {
        tk::u32 a[4];
        tk::load_a<QK>(a, q_addr, q_base, warp * 16, kd * 16);
#pragma unroll
        for (int j = 0; j < BDV / 16; ++j) {
            tk::u32 b[4];
            tk::load_b_kn<S>(b, s_addr, s_base, kd * 16, j * 16);  // S is [dk][dv] = [k][n]
            tk::dtype<T>::mma(o[2 * j], a, b[0], b[1]);
            tk::dtype<T>::mma(o[2 * j + 1], a, b[2], b[3]);
        }
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        const float f = lam_pow[warp * 16 + tk::layout::c_row(lane, e) + 1];
#pragma unroll
        for (int j = 0; j < BDV / 8; ++j) o[j][e] *= f;
    }
}

// O_w += (Q_w K^T * decay mask) V over the key tiles at or below the diagonal, one tile of
// 16 keys at a time (scores -> mask -> A operand -> P V), to keep few registers live.
template <class T, int DK>
__device__ __forceinline__ void lin_intra(float (&o)[BDV / 8][4], tk::u32 q_base,
                                          const tk::quad_addr<typename LinTiles<DK>::QK>& q_addr,
                                          tk::u32 k_base,
                                          const tk::pair_addr<typename LinTiles<DK>::QK>& k_addr,
                                          tk::u32 v_base,
                                          const tk::quad_addr<typename LinTiles<DK>::V>& v_addr,
                                          const float* lam_pow, int warp, int lane) {
    using QK = typename LinTiles<DK>::QK;
    using V = typename LinTiles<DK>::V;
#pragma unroll
    for (int j = 0; j < C / 16; ++j) {
        if (j > warp) continue;  // keys 16j.. all come after this warp's rows
        float p[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
        for (int kd = 0; kd < DK / 16; ++kd) {
            tk::u32 a[4], b[4];
            tk::load_a<QK>(a, q_addr, q_base, warp * 16, kd * 16);
            tk::load_b_nk<QK>(b, k_addr, k_base, j * 16, kd * 16);  // K is [key][dk] = [n][k]
            tk::dtype<T>::mma(p[0], a, b[0], b[1]);
            tk::dtype<T>::mma(p[1], a, b[2], b[3]);
        }
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int row = warp * 16 + tk::layout::c_row(lane, e);
                const int col = j * 16 + h * 8 + tk::layout::c_col(lane, e);
                p[h][e] = col <= row ? p[h][e] * lam_pow[row - col] : 0.f;
            }
        tk::u32 a[4];
        tk::acc_to_a<T>(a, p[0], p[1]);
#pragma unroll
        for (int d = 0; d < BDV / 16; ++d) {
            tk::u32 b[4];
            tk::load_b_kn<V>(b, v_addr, v_base, j * 16, d * 16);  // V is [key][dv] = [k][n]
            tk::dtype<T>::mma(o[2 * d], a, b[0], b[1]);
            tk::dtype<T>::mma(o[2 * d + 1], a, b[2], b[3]);
        }
    }
}

// V row j *= lambda^(C-1-j), in place (a row is one contiguous run of 16-byte units).
template <class T>
__device__ __forceinline__ void lin_decay_v(unsigned char* v_ptr, const float* lam_pow, int tid) {
    constexpr int kUnits = C * BDV / 8;
#pragma unroll
    for (int i = 0; i < kUnits / THREADS; ++i) {
        const int u = tid + i * THREADS;
        const float f = lam_pow[C - 1 - u / (BDV / 8)];
        tk::u32* w = reinterpret_cast<tk::u32*>(v_ptr + 16 * u);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const float lo = tk::dtype<T>::to_float((tk::u16)(w[e] & 0xffffu)) * f;
            const float hi = tk::dtype<T>::to_float((tk::u16)(w[e] >> 16)) * f;
            w[e] = tk::dtype<T>::pack(lo, hi);
        }
    }
}

// state = lambda^C state + K^T V_decayed for the warp's state rows; then its 16-bit copy.
template <class T, int DK>
__device__ __forceinline__ void lin_state(float (&state)[DK / 64][BDV / 8][4], tk::u32 k_base,
                                          const tk::pair_addr<typename LinTiles<DK>::QK>& kt_addr,
                                          tk::u32 v_base,
                                          const tk::quad_addr<typename LinTiles<DK>::V>& v_addr,
                                          tk::u32 s_base, const float* lam_pow, int warp, int lane) {
    using QK = typename LinTiles<DK>::QK;
    using V = typename LinTiles<DK>::V;
    using S = typename LinTiles<DK>::S;
    const float keep = lam_pow[C];
#pragma unroll
    for (int mt = 0; mt < DK / 64; ++mt) {
#pragma unroll
        for (int d = 0; d < BDV / 8; ++d)
#pragma unroll
            for (int e = 0; e < 4; ++e) state[mt][d][e] *= keep;
#pragma unroll
        for (int kk = 0; kk < C / 16; ++kk) {
            tk::u32 a[4];
            tk::load_a_trans<QK>(a, kt_addr, k_base, kk * 16, mt * 16);  // A = K^T
#pragma unroll
            for (int d = 0; d < BDV / 16; ++d) {
                tk::u32 b[4];
                tk::load_b_kn<V>(b, v_addr, v_base, kk * 16, d * 16);
                tk::dtype<T>::mma(state[mt][2 * d], a, b[0], b[1]);
                tk::dtype<T>::mma(state[mt][2 * d + 1], a, b[2], b[3]);
            }
        }
        const int m0 = warp * (DK / 4) + mt * 16;
#pragma unroll
        for (int d = 0; d < BDV / 8; ++d)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                tk::st_shared_u32(S::addr(s_base, m0 + tk::layout::c_row(lane, 2 * h),
                                          d * 8 + tk::layout::c_col(lane, 2 * h)),
                                  tk::dtype<T>::pack(state[mt][d][2 * h], state[mt][d][2 * h + 1]));
    }
}

template <class T, int DK>
__device__ __forceinline__ void lin_attn_body(const tk::u16* __restrict__ Q,
                                              const tk::u16* __restrict__ K,
                                              const tk::u16* __restrict__ V, tk::u16* __restrict__ O,
                                              const float* __restrict__ slopes, int H, int N,
                                              int DV) {
    using Tiles = LinTiles<DK>;
    extern __shared__ __align__(128) unsigned char smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int dv0 = blockIdx.x * BDV;
    const tk::i64 bh = blockIdx.y;
    const tk::u16* q = Q + bh * N * DK;
    const tk::u16* k = K + bh * N * DK;
    const tk::u16* v = V + bh * N * DV + dv0;
    tk::u16* o = O + bh * N * DV + dv0;
    const int dv_valid = DV - dv0 < BDV ? DV - dv0 : BDV;
    const tk::u32 base = tk::smem_addr(smem);
    const tk::u32 s_s = base + 2 * Tiles::kStageBytes;
    float* lam_pow = reinterpret_cast<float*>(smem + 2 * Tiles::kStageBytes + Tiles::S::kBytes);
    const float decay_log2 = slopes != nullptr ? -slopes[bh % H] * LOG2E : 0.f;
    const bool decay = decay_log2 != 0.f;
    if (tid <= C) lam_pow[tid] = exp2f(decay_log2 * tid);  // lambda^tid (exactly 1 without decay)
    const int n_chunks = (N + C - 1) / C;

    auto load_chunk = [&](int stage, int c) {
        const tk::u32 st = base + stage * Tiles::kStageBytes;
        tk::load_tile<typename Tiles::QK, THREADS>(st, q, DK, c * C, 0, N, DK, tid, true);
        tk::load_tile<typename Tiles::QK, THREADS>(st + Tiles::QK::kBytes, k, DK, c * C, 0, N, DK,
                                                   tid, true);
        tk::load_tile<typename Tiles::V, THREADS>(st + 2 * Tiles::QK::kBytes, v, DV, c * C, 0, N,
                                                  dv_valid, tid, true);
    };
    if (n_chunks > 0) load_chunk(0, 0);
    tk::cp_async_commit();

    const tk::quad_addr<typename Tiles::QK> q_addr(lane);
    const tk::pair_addr<typename Tiles::QK> k_addr(lane);
    const tk::pair_addr<typename Tiles::QK> kt_addr(lane, warp * (DK / 4));  // K^T: warp's rows
    const tk::quad_addr<typename Tiles::V> v_addr(lane);
    const tk::quad_addr<typename Tiles::S> s_addr(lane);
    float state[DK / 64][BDV / 8][4];
#pragma unroll
    for (int mt = 0; mt < DK / 64; ++mt) tk::zero(state[mt]);
    for (int c = 0; c < n_chunks; ++c) {
        tk::cp_async_wait<0>();
        __syncthreads();  // chunk c landed; state copy of chunk c-1 written; stage c-1 free
        if (c + 1 < n_chunks) load_chunk((c + 1) & 1, c + 1);
        tk::cp_async_commit();
        const tk::u32 q_s = base + (c & 1) * Tiles::kStageBytes;
        const tk::u32 k_s = q_s + Tiles::QK::kBytes, v_s = k_s + Tiles::QK::kBytes;

        float out[BDV / 8][4];
        tk::zero(out);
        if (c > 0) lin_inter<T, DK>(out, q_s, q_addr, s_s, s_addr, lam_pow, warp, lane);
        lin_intra<T, DK>(out, q_s, q_addr, k_s, k_addr, v_s, v_addr, lam_pow, warp, lane);
#pragma unroll
        for (int d = 0; d < BDV / 8; ++d)
            tk::store_acc<T>(o, DV, N - c * C, dv_valid, warp * 16, d * 8, out[d], lane, true);
        o += (tk::i64)C * DV;
        if (c + 1 == n_chunks) break;  // the final state is not needed
        __syncthreads();  // every warp is done reading the state copy and the raw V
        if (decay) {
            lin_decay_v<T>(smem + (v_s - base), lam_pow, tid);
            __syncthreads();
        }
        lin_state<T, DK>(state, k_s, kt_addr, v_s, v_addr, s_s, lam_pow, warp, lane);
    }
    tk::cp_async_wait<0>();
}

#define ICLR25_LIN_ENTRY(NAME, T, DK)                                                    \
    extern "C" __global__ void __launch_bounds__(THREADS)                                 \
        NAME(const tk::u16* Q, const tk::u16* K, const tk::u16* V, tk::u16* O,             \
             const float* slopes, int H, int N, int DV) {                                  \
        lin_attn_body<T, DK>(Q, K, V, O, slopes, H, N, DV);                                \
    }

ICLR25_LIN_ENTRY(lin_attn_bf16_dk64, tk::bf16, 64)
ICLR25_LIN_ENTRY(lin_attn_bf16_dk128, tk::bf16, 128)
ICLR25_LIN_ENTRY(lin_attn_f16_dk64, tk::f16, 64)
ICLR25_LIN_ENTRY(lin_attn_f16_dk128, tk::f16, 128)
