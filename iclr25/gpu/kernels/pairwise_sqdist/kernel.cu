// Pairwise squared Euclidean distances, D[i, j] = sum_k (X[i, k] - Y[j, k])^2.
//
// X: (n, d) and Y: (m, d), row-major float32; D: (n, m) row-major float32.
// A block of 16 x 16 threads computes a 64 x 64 tile of D, each thread a 4 x 4
// register tile (rows ty + 16 i, columns tx + 16 j), with the shared tile routine of
// sqdist_tile.cuh (differences squared directly: no cancellation for near-identical
// points). Out-of-range rows and columns are guarded on store: any n, m, d work.
#include "sqdist_tile.cuh"

namespace {
using namespace iclr25::sqdist;  // TILE = 64, THREADS = 16, PER = 4
}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS * THREADS)
pairwise_sqdist_f32(const float* __restrict__ X, const float* __restrict__ Y,
                    float* __restrict__ D, int n, int m, int d) {
    __shared__ Staging staging;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;

    float acc[PER][PER];
    tile(acc, staging, X, Y, n, m, d, row0, col0);

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
