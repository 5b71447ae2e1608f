// Gaussian-kernel sums for MMD: out[b] += sum_{i,j} exp(-gammas[b] * |X[i] - Y[j]|^2).
//
// X: (n, d) and Y: (m, d), row-major float32; gammas: (nb,) float32 with nb <= MAX_BW;
// out: (nb,) float64, zeroed by the caller. A block of 16 x 16 threads covers a 64 x 64
// tile of (i, j) pairs, each thread a 4 x 4 register tile (rows ty + 16 r, columns
// tx + 16 c), from the shared tile routine of sqdist_tile.cuh. Differences are squared
// directly, so a point against itself gives exactly 0 and kernel value 1. Each thread sums its (at most 16) kernel values per
// bandwidth in float32, a warp reduces them with shuffles, and lane 0 adds the warp's
// sum to out[b] with a float64 atomicAdd (sm_60+). Out-of-range rows, columns and
// features are zero-filled on load and skipped in the sums: any n, m, d work.
#include "common.cuh"
#include "sqdist_tile.cuh"

namespace {
using namespace iclr25::sqdist;  // TILE = 64, THREADS = 16, PER = 4
constexpr int MAX_BW = 8;
}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS * THREADS)
rbf_kernel_sums_f32(const float* __restrict__ X, const float* __restrict__ Y,
                    const float* __restrict__ gammas, int nb, double* __restrict__ out,
                    int n, int m, int d) {
    __shared__ Staging staging;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * THREADS + tx;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;

    float acc[PER][PER];
    tile(acc, staging, X, Y, n, m, d, row0, col0);

    const int lane = tid & 31;
#pragma unroll
    for (int bw = 0; bw < MAX_BW; ++bw) {
        if (bw >= nb) break;  // uniform across the block: every lane reaches warp_sum
        const float gamma = gammas[bw];
        float part = 0.f;
#pragma unroll
        for (int r = 0; r < PER; ++r) {
            const int gi = row0 + ty + THREADS * r;
#pragma unroll
            for (int q = 0; q < PER; ++q) {
                const int gj = col0 + tx + THREADS * q;
                if (gi < n && gj < m) part += expf(-gamma * acc[r][q]);
            }
        }
        part = iclr25::warp_sum(part);
        if (lane == 0) atomicAdd(&out[bw], (double)part);
    }
}
