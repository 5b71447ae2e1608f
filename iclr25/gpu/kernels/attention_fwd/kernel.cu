// Attention forward, flash style: O = softmax(scale * Q K^T [+ causal mask]) V, and the
// row log-sum-exp, without materialising the N x N score matrix.
//
// Q: (B*H, n_q, D), K and V: (B*H, n_kv, D), O: (B*H, n_q, D), all contiguous 16-bit
// (bf16 or fp16); LSE: (B*H, n_q) fp32 (natural log), optional (null to skip). D = 64 or 128.
// One block of 4 warps per (64 query rows, head); each warp owns 16 query rows, keeps its Q
// fragments, the output accumulator (16 x D, fp32) and the running max/sum in registers, and
// walks the key/value tiles (64 x D) through a 2-stage cp.async pipeline:
//   S = Q K^T (mma), mask, online softmax in the log2 domain (m, l rescaled by
//   alpha = 2^(m_old - m_new)), P = 2^(S - m) reused in registers as the A operand, O += P V.
// Causal masking is top-left aligned (query i sees keys j <= i, torch's convention) and only
// the key tiles a query block can see are visited; causal query blocks run longest first.
// Rows and keys beyond n_q / n_kv are zero-filled and masked, so any n_q, n_kv >= 1 works.
#include "tk_tiles.cuh"

namespace {
constexpr int BQ = 64, BKV = 64, WARPS = 4, THREADS = 32 * WARPS;
constexpr float LN2 = 0.6931471805599453f;
}  // namespace

template <class T, int D>
struct AttnTiles {
    using Q = tk::st<BQ, D>;
    using KV = tk::st<BKV, D>;
    static constexpr int kSmemBytes = Q::kBytes + 4 * KV::kBytes;  // Q + 2 stages of (K, V)
};

// S (16 x BKV per warp) = Q_w K^T for one key tile.
template <class T, int D>
__device__ __forceinline__ void attn_scores(float (&s)[BKV / 8][4], const tk::u32 (&qf)[D / 16][4],
                                            tk::u32 k_base,
                                            const tk::pair_addr<typename AttnTiles<T, D>::KV>& k_addr) {
    using KV = typename AttnTiles<T, D>::KV;
#pragma unroll
    for (int j = 0; j < BKV / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[j][e] = 0.f;
#pragma unroll
    for (int kd = 0; kd < D / 16; ++kd)
#pragma unroll
        for (int j = 0; j < BKV / 16; ++j) {
            tk::u32 b[4];
            tk::load_b_nk<KV>(b, k_addr, k_base, j * 16, kd * 16);  // K is [key][d] = [n][k]
            tk::dtype<T>::mma(s[2 * j], qf[kd], b[0], b[1]);
            tk::dtype<T>::mma(s[2 * j + 1], qf[kd], b[2], b[3]);
        }
}

// Scale into the log2 domain and mask keys >= n_kv (and j > i when causal) to -inf.
__device__ __forceinline__ void attn_scale_mask(float (&s)[BKV / 8][4], float scale_log2, int kv0,
                                                int row_base, int n_kv, bool causal, bool need_mask,
                                                int lane) {
#pragma unroll
    for (int j = 0; j < BKV / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            float x = s[j][e] * scale_log2;
            if (need_mask) {
                const int col = kv0 + j * 8 + tk::layout::c_col(lane, e);
                const int row = row_base + tk::layout::c_row(lane, e);
                if (col >= n_kv || (causal && col > row)) x = ICLR25_NEG_INF;
            }
            s[j][e] = x;
        }
}

// Online softmax for the thread's two rows (h = 0: row g, h = 1: row g + 8): updates the
// running max m (log2 domain), the thread-partial sum l, rescales O and turns s into P.
template <int D>
__device__ __forceinline__ void attn_online_softmax(float (&s)[BKV / 8][4], float (&o)[D / 8][4],
                                                    float (&m)[2], float (&l)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float mx = ICLR25_NEG_INF;
#pragma unroll
        for (int j = 0; j < BKV / 8; ++j) mx = fmaxf(mx, fmaxf(s[j][2 * h], s[j][2 * h + 1]));
        mx = tk::quad_max(mx);
        const float m_new = fmaxf(m[h], mx);
        const float m_use = (m_new == ICLR25_NEG_INF) ? 0.f : m_new;  // all masked so far: no NaN
        const float alpha = exp2f(m[h] - m_use);
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < BKV / 8; ++j) {
            s[j][2 * h] = exp2f(s[j][2 * h] - m_use);
            s[j][2 * h + 1] = exp2f(s[j][2 * h + 1] - m_use);
            sum += s[j][2 * h] + s[j][2 * h + 1];
        }
        l[h] = l[h] * alpha + sum;  // quad-reduced once at the end
        m[h] = m_new;
#pragma unroll
        for (int d = 0; d < D / 8; ++d) {
            o[d][2 * h] *= alpha;
            o[d][2 * h + 1] *= alpha;
        }
    }
}

// O += P V for one key tile, P taken straight from the score accumulators.
template <class T, int D>
__device__ __forceinline__ void attn_pv(float (&o)[D / 8][4], const float (&p)[BKV / 8][4],
                                        tk::u32 v_base,
                                        const tk::quad_addr<typename AttnTiles<T, D>::KV>& v_addr) {
    using KV = typename AttnTiles<T, D>::KV;
#pragma unroll
    for (int kk = 0; kk < BKV / 16; ++kk) {
        tk::u32 a[4];
        tk::acc_to_a<T>(a, p[2 * kk], p[2 * kk + 1]);
#pragma unroll
        for (int d = 0; d < D / 16; ++d) {
            tk::u32 b[4];
            tk::load_b_kn<KV>(b, v_addr, v_base, kk * 16, d * 16);  // V is [key][d] = [k][n]
            tk::dtype<T>::mma(o[2 * d], a, b[0], b[1]);
            tk::dtype<T>::mma(o[2 * d + 1], a, b[2], b[3]);
        }
    }
}

template <class T, int D>
__device__ __forceinline__ void attn_epilogue(tk::u16* o_g, float* lse, int n_q, int row_base,
                                              float (&o)[D / 8][4], const float (&m)[2],
                                              const float (&l)[2], int lane) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float total = tk::quad_sum(l[h]);
        const float inv = total > 0.f ? 1.f / total : 0.f;
#pragma unroll
        for (int d = 0; d < D / 8; ++d) {
            o[d][2 * h] *= inv;
            o[d][2 * h + 1] *= inv;
        }
        const int row = row_base + tk::layout::c_row(lane, 2 * h);
        if (lse != nullptr && tk::layout::thread_in_group(lane) == 0 && row < n_q)
            lse[row] = total > 0.f ? (m[h] + log2f(total)) * LN2 : ICLR25_NEG_INF;
    }
#pragma unroll
    for (int d = 0; d < D / 8; ++d)
        tk::store_acc<T>(o_g, D, n_q, D, row_base, d * 8, o[d], lane, true);
}

template <class T, int D>
__device__ __forceinline__ void attn_fwd_body(const tk::u16* __restrict__ Q,
                                              const tk::u16* __restrict__ K,
                                              const tk::u16* __restrict__ V, tk::u16* __restrict__ O,
                                              float* __restrict__ LSE, int n_q, int n_kv,
                                              float scale_log2, int causal) {
    using Tiles = AttnTiles<T, D>;
    extern __shared__ __align__(128) unsigned char smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int q_block = causal ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
    const int q0 = q_block * BQ, row_base = q0 + warp * 16;
    const tk::i64 bh = blockIdx.y;
    const tk::u16* q = Q + bh * n_q * D;
    const tk::u16* k = K + bh * n_kv * D;
    const tk::u16* v = V + bh * n_kv * D;
    const tk::u32 q_s = tk::smem_addr(smem), kv_s = q_s + Tiles::Q::kBytes;
    const int n_tiles = tk::layout::kv_tile_count(q0, BQ, n_kv, BKV, causal);

    auto load_kv = [&](int stage, int t) {
        const tk::u32 k_s = kv_s + stage * 2 * Tiles::KV::kBytes;
        tk::load_tile<typename Tiles::KV, THREADS>(k_s, k, D, t * BKV, 0, n_kv, D, tid, true);
        tk::load_tile<typename Tiles::KV, THREADS>(k_s + Tiles::KV::kBytes, v, D, t * BKV, 0, n_kv,
                                                   D, tid, true);
    };
    tk::load_tile<typename Tiles::Q, THREADS>(q_s, q, D, q0, 0, n_q, D, tid, true);
    if (n_tiles > 0) load_kv(0, 0);
    tk::cp_async_commit();

    const tk::quad_addr<typename Tiles::Q> q_addr(lane);
    const tk::pair_addr<typename Tiles::KV> k_addr(lane);
    const tk::quad_addr<typename Tiles::KV> v_addr(lane);
    tk::u32 qf[D / 16][4];
    float o[D / 8][4], m[2] = {ICLR25_NEG_INF, ICLR25_NEG_INF}, l[2] = {0.f, 0.f};
    tk::zero(o);
    for (int t = 0; t < n_tiles; ++t) {
        tk::cp_async_wait<0>();
        __syncthreads();  // tile t landed; every warp is done with tile t-1's stage
        if (t + 1 < n_tiles) load_kv((t + 1) & 1, t + 1);
        tk::cp_async_commit();
        if (t == 0) {
#pragma unroll
            for (int kd = 0; kd < D / 16; ++kd)
                tk::load_a<typename Tiles::Q>(qf[kd], q_addr, q_s, warp * 16, kd * 16);
        }
        const tk::u32 k_s = kv_s + (t & 1) * 2 * Tiles::KV::kBytes;
        float s[BKV / 8][4];
        attn_scores<T, D>(s, qf, k_s, k_addr);
        const int kv0 = t * BKV;
        const bool need_mask = tk::layout::tile_needs_mask(kv0, BKV, n_kv, row_base, causal);
        attn_scale_mask(s, scale_log2, kv0, row_base, n_kv, causal, need_mask, lane);
        attn_online_softmax<D>(s, o, m, l);
        attn_pv<T, D>(o, s, k_s + Tiles::KV::kBytes, v_addr);
    }
    tk::cp_async_wait<0>();
    attn_epilogue<T, D>(O + bh * n_q * D, LSE == nullptr ? nullptr : LSE + bh * n_q, n_q,
                        row_base, o, m, l, lane);
}

#define ICLR25_ATTN_ENTRY(NAME, T, D)                                                         \
    extern "C" __global__ void __launch_bounds__(THREADS)                                      \
        NAME(const tk::u16* Q, const tk::u16* K, const tk::u16* V, tk::u16* O, float* LSE,      \
             int n_q, int n_kv, float scale_log2, int causal) {                                \
        attn_fwd_body<T, D>(Q, K, V, O, LSE, n_q, n_kv, scale_log2, causal);                   \
    }

ICLR25_ATTN_ENTRY(attn_fwd_bf16_d64, tk::bf16, 64)
ICLR25_ATTN_ENTRY(attn_fwd_bf16_d128, tk::bf16, 128)
ICLR25_ATTN_ENTRY(attn_fwd_f16_d64, tk::f16, 64)
ICLR25_ATTN_ENTRY(attn_fwd_f16_d128, tk::f16, 128)
