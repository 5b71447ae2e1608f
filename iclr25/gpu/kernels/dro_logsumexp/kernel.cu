// Entropic WDRO inner term: for each row i of an (n, m) problem,
//   a_ij   = (L_ij - lam * C_ij) * inv_eps
//   lse_i  = log( (1/m) * sum_j exp(a_ij) )            (stable: max-shifted)
//   wc_i   = sum_j softmax_j(a_ij) * C_ij               (the derivative of -eps*lse_i in lam)
// L: losses at the Monte Carlo samples, C: their transport costs; both row-major float32.
// One block of 256 threads per row (grid-stride over rows); three passes over the row
// (max, then sum of exp and of exp * C) with warp shuffles and a shared-memory reduction.
// Rows with m == 0 get lse = -inf and wc = 0; a row whose costs contain +inf for some
// samples simply gives those samples weight 0 (exp(-inf) = 0).
#include "common.cuh"

namespace {
constexpr int THREADS = 256;
constexpr int WARPS = THREADS / 32;

__device__ __forceinline__ float block_max(float v, float* shared) {
    v = iclr25::warp_max(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    float r = (threadIdx.x < WARPS) ? shared[threadIdx.x] : ICLR25_NEG_INF;
    if (warp == 0) r = iclr25::warp_max(r);
    if (threadIdx.x == 0) shared[0] = r;
    __syncthreads();
    r = shared[0];
    __syncthreads();
    return r;
}

__device__ __forceinline__ float block_sum(float v, float* shared) {
    v = iclr25::warp_sum(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    float r = (threadIdx.x < WARPS) ? shared[threadIdx.x] : 0.f;
    if (warp == 0) r = iclr25::warp_sum(r);
    if (threadIdx.x == 0) shared[0] = r;
    __syncthreads();
    r = shared[0];
    __syncthreads();
    return r;
}
}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
dro_lse_rows_f32(const float* __restrict__ L, const float* __restrict__ C, int n, int m,
                 float lam, float inv_eps, float* __restrict__ lse, float* __restrict__ wc) {
    __shared__ float shared[WARPS];
    for (int row = blockIdx.x; row < n; row += gridDim.x) {
        const float* l = L + (size_t)row * m;
        const float* c = C + (size_t)row * m;
        float local_max = ICLR25_NEG_INF;
        for (int j = threadIdx.x; j < m; j += THREADS) {
            local_max = fmaxf(local_max, (l[j] - lam * c[j]) * inv_eps);
        }
        const float row_max = block_max(local_max, shared);
        float s = 0.f, sc = 0.f;
        if (row_max > ICLR25_NEG_INF) {
            for (int j = threadIdx.x; j < m; j += THREADS) {
                const float e = __expf((l[j] - lam * c[j]) * inv_eps - row_max);
                s += e;
                sc += (e > 0.f) ? e * c[j] : 0.f;
            }
        }
        const float total = block_sum(s, shared);
        const float total_c = block_sum(sc, shared);
        if (threadIdx.x == 0) {
            if (m == 0 || !(row_max > ICLR25_NEG_INF)) {
                lse[row] = ICLR25_NEG_INF;
                wc[row] = 0.f;
            } else {
                lse[row] = row_max + logf(total) - logf((float)m);
                wc[row] = total_c / total;
            }
        }
    }
}
