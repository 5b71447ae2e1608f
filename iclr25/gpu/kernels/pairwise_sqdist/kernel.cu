// Pairwise squared Euclidean distances, D[i, j] = sum_k (X[i, k] - Y[j, k])^2.
//
// X: (n, d) and Y: (m, d), row-major float32; D: (n, m) row-major float32.
// A block of 16 x 16 threads computes a 64 x 64 tile of D, each thread a 4 x 4
// register tile (rows ty + 16 i, columns tx + 16 j). The feature axis is walked in
// chunks of KC, staged transposed in shared memory (padded against bank conflicts).
// Differences are squared directly (no |x|^2 + |y|^2 - 2 x.y expansion), so there is
// no cancellation for near-identical points. Out-of-range rows, columns and features
// are zero-filled on load and guarded on store: any n, m, d work.
#include "common.cuh"

namespace {
constexpr int TILE = 64;  // output rows/cols per block
constexpr int KC = 16;    // features per shared-memory stage
constexpr int THREADS = 16;
constexpr int PER = TILE / THREADS;  // 4 outputs per thread and axis
}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS * THREADS)
pairwise_sqdist_f32(const float* __restrict__ X, const float* __restrict__ Y,
                    float* __restrict__ D, int n, int m, int d) {
    __shared__ float xs[KC][TILE + 4];
    __shared__ float ys[KC][TILE + 4];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * THREADS + tx;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;

    float acc[PER][PER];
#pragma unroll
    for (int i = 0; i < PER; ++i)
#pragma unroll
        for (int j = 0; j < PER; ++j) acc[i][j] = 0.f;

    for (int k0 = 0; k0 < d; k0 += KC) {
        for (int e = tid; e < TILE * KC; e += THREADS * THREADS) {
            const int r = e / KC, c = e % KC;  // (row in tile, feature in chunk)
            const int gk = k0 + c;
            const int gi = row0 + r, gj = col0 + r;
            xs[c][r] = (gi < n && gk < d) ? X[(size_t)gi * d + gk] : 0.f;
            ys[c][r] = (gj < m && gk < d) ? Y[(size_t)gj * d + gk] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int c = 0; c < KC; ++c) {
            float a[PER], b[PER];
#pragma unroll
            for (int i = 0; i < PER; ++i) a[i] = xs[c][ty + THREADS * i];
#pragma unroll
            for (int j = 0; j < PER; ++j) b[j] = ys[c][tx + THREADS * j];
#pragma unroll
            for (int i = 0; i < PER; ++i)
#pragma unroll
                for (int j = 0; j < PER; ++j) {
                    const float diff = a[i] - b[j];
                    acc[i][j] = fmaf(diff, diff, acc[i][j]);
                }
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < PER; ++i) {
        const int gi = row0 + ty + THREADS * i;
        if (gi >= n) continue;
#pragma unroll
        for (int j = 0; j < PER; ++j) {
            const int gj = col0 + tx + THREADS * j;
            if (gj < m) D[(size_t)gi * m + gj] = acc[i][j];
        }
    }
}
