// Per-cluster sums of Euclidean distances, the O(n^2 d) part of the silhouette score.
//
// S[i, c] = sum_{j : labels[j] == c} || X[i] - X[j] ||_2
//
// X: (n, d) row-major float32; labels: (n,) int32 in [0, C); S: (n, C) row-major float32.
// Each block owns TILE = 64 rows of S and walks all column tiles of 64 points: a 16 x 16
// thread block computes the 64 x 64 tile of squared distances (sqdist_tile.cuh: each
// thread a 4 x 4 register tile, differences squared directly so d(i, i) = 0 exactly),
// then adds sqrt(d2) into a shared accumulator acc[row][label of column] with
// shared-memory atomics. Rows are owned by one block, so
// S is written once, without global atomics. C <= CMAX (the wrapper falls back to the
// CPU path above). Out-of-range rows, columns and features are zero-filled on load and
// guarded on use: any n, d work; labels outside [0, C) are ignored.
#include "sqdist_tile.cuh"

namespace {
using namespace iclr25::sqdist;  // TILE = 64, THREADS = 16, PER = 4
constexpr int CMAX = 32;         // clusters held in shared memory
}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS * THREADS)
silhouette_sums_f32(const float* __restrict__ X, const int* __restrict__ labels,
                    float* __restrict__ S, int n, int d, int C) {
    __shared__ Staging staging;
    __shared__ float acc[TILE][CMAX];
    __shared__ int lab[TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * THREADS + tx;
    const int row0 = blockIdx.x * TILE;

    for (int e = tid; e < TILE * CMAX; e += THREADS * THREADS) acc[e / CMAX][e % CMAX] = 0.f;

    for (int col0 = 0; col0 < n; col0 += TILE) {
        float d2[PER][PER];
        tile(d2, staging, X, X, n, n, d, row0, col0);

        if (tid < TILE) lab[tid] = (col0 + tid < n) ? labels[col0 + tid] : -1;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < PER; ++i) {
            if (row0 + ty + THREADS * i >= n) continue;
#pragma unroll
            for (int j = 0; j < PER; ++j) {
                const int c = lab[tx + THREADS * j];  // -1 past the last column
                if (c >= 0 && c < C) atomicAdd(&acc[ty + THREADS * i][c], sqrtf(d2[i][j]));
            }
        }
        __syncthreads();  // lab and acc are reused by the next column tile
    }

    for (int e = tid; e < TILE * C; e += THREADS * THREADS) {
        const int r = e / C, c = e % C;
        const int gi = row0 + r;
        if (gi < n) S[(size_t)gi * C + c] = acc[r][c];
    }
}
