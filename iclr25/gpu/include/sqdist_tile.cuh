// A 64 x 64 tile of squared Euclidean distances on CUDA cores, shared by the distance
// kernels (pairwise_sqdist, mmd, silhouette).
//
// For a 16 x 16 thread block, thread (tx, ty) gets
//   acc[i][j] = sum_k (X[row0 + ty + 16 i, k] - Y[col0 + tx + 16 j, k])^2,  i, j < 4,
// X: (n, d) and Y: (m, d) row-major float32. The feature axis is walked in chunks of KC,
// staged transposed in shared memory (padded against bank conflicts). Differences are
// squared directly (no |x|^2 + |y|^2 - 2 x.y expansion), so there is no cancellation for
// near-identical points and d(i, i) = 0 exactly. Out-of-range rows and features are
// zero-filled on load: the caller guards rows >= n and columns >= m on use. Every thread
// of the block calls it; it ends with a barrier, so the staging buffers can be reused.
#pragma once

namespace iclr25 {
namespace sqdist {

constexpr int TILE = 64;             // rows (and columns) per tile
constexpr int KC = 16;               // features per shared-memory stage
constexpr int THREADS = 16;          // threads per axis
constexpr int PER = TILE / THREADS;  // 4 outputs per thread and axis

struct Staging {
    float xs[KC][TILE + 4];
    float ys[KC][TILE + 4];
};

__device__ __forceinline__ void tile(float (&acc)[PER][PER], Staging& s,
                                     const float* __restrict__ X, const float* __restrict__ Y,
                                     int n, int m, int d, int row0, int col0) {
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * THREADS + tx;
#pragma unroll
    for (int i = 0; i < PER; ++i)
#pragma unroll
        for (int j = 0; j < PER; ++j) acc[i][j] = 0.f;

    for (int k0 = 0; k0 < d; k0 += KC) {
        for (int e = tid; e < TILE * KC; e += THREADS * THREADS) {
            const int r = e / KC, c = e % KC;  // (point in tile, feature in chunk)
            const int gk = k0 + c;
            const int gi = row0 + r, gj = col0 + r;
            s.xs[c][r] = (gi < n && gk < d) ? X[(size_t)gi * d + gk] : 0.f;
            s.ys[c][r] = (gj < m && gk < d) ? Y[(size_t)gj * d + gk] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int c = 0; c < KC; ++c) {
            float a[PER], b[PER];
#pragma unroll
            for (int i = 0; i < PER; ++i) a[i] = s.xs[c][ty + THREADS * i];
#pragma unroll
            for (int j = 0; j < PER; ++j) b[j] = s.ys[c][tx + THREADS * j];
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
}

}  // namespace sqdist
}  // namespace iclr25
