// Batched single-source shortest paths on a 4/8-connected grid, many masks x many sources.
//
//   blocked : (M, H, W) uint8, 1 = closed cell (known wall or constraint), row-major [m][y][x]
//   sources : (S,) int32 cell indices y * W + x
//   targets : (T,) int32 cell indices, or n_targets == 0 for the whole field
//   out     : (M, S, T) or (M, S, H*W) float32; unreachable = +inf
//
// One thread block per (mask, source) pair (grid-stride over pairs). The block copies its
// mask into shared memory next to a float distance field, sets dist[source] = 0, and runs
// pull-style relaxation sweeps: every open cell c takes min over legal moves n -> c of
// dist[n] + w. A move is legal when n and c are open and, for a diagonal, both corner cells
// (c.x, n.y) and (n.x, c.y) are open (no corner cutting). Sweeps run until no thread lowers
// a distance (__syncthreads_or). Distances only decrease, so reading a neighbour that
// another thread is updating in the same sweep is harmless (Gauss-Seidel order): the fixed
// point is the shortest-path field. A closed source keeps 0 and relaxes nothing.
#include "common.cuh"

namespace {
constexpr int THREADS = 256;
constexpr float UNREACHED = 3.0e38f;  // below FLT_MAX: +inf is written only at the end
#define ICLR25_POS_INF (__int_as_float(0x7f800000u))

__device__ __forceinline__ float relax_cell(const float* dist, const unsigned char* closed,
                                            int x, int y, int height, int width, int moves,
                                            float diag_cost) {
    const int c = y * width + x;
    float best = dist[c];
    // orthogonal neighbours n = c - d
    const int ox[4] = {1, -1, 0, 0};
    const int oy[4] = {0, 0, 1, -1};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const int nx = x - ox[k], ny = y - oy[k];
        if (nx < 0 || nx >= width || ny < 0 || ny >= height) continue;
        const int n = ny * width + nx;
        if (closed[n]) continue;
        best = fminf(best, dist[n] + 1.0f);
    }
    if (moves == 8) {
#pragma unroll
        for (int dx = -1; dx <= 1; dx += 2) {
#pragma unroll
            for (int dy = -1; dy <= 1; dy += 2) {
                const int nx = x - dx, ny = y - dy;
                if (nx < 0 || nx >= width || ny < 0 || ny >= height) continue;
                const int n = ny * width + nx;
                // corners of the move n -> c: (c.x, n.y) and (n.x, c.y)
                if (closed[n] || closed[ny * width + x] || closed[y * width + nx]) continue;
                best = fminf(best, dist[n] + diag_cost);
            }
        }
    }
    return best;
}
}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
grid_sssp_f32(const unsigned char* __restrict__ blocked, int n_masks, int height, int width,
              const int* __restrict__ sources, int n_sources, const int* __restrict__ targets,
              int n_targets, int moves, float diag_cost, float* __restrict__ out) {
    extern __shared__ float shared[];
    const int cells = height * width;
    float* dist = shared;                                              // (cells,)
    unsigned char* closed = reinterpret_cast<unsigned char*>(shared + cells);  // (cells,)
    const long long pairs = (long long)n_masks * n_sources;
    for (long long pair = blockIdx.x; pair < pairs; pair += gridDim.x) {
        const int m = (int)(pair / n_sources);
        const int s = (int)(pair % n_sources);
        const unsigned char* mask = blocked + (size_t)m * cells;
        const int source = sources[s];
        for (int c = threadIdx.x; c < cells; c += THREADS) {
            closed[c] = mask[c];
            dist[c] = (c == source) ? 0.0f : UNREACHED;
        }
        __syncthreads();
        int changed = 1;
        while (changed) {
            int local = 0;
            for (int c = threadIdx.x; c < cells; c += THREADS) {
                if (closed[c] || c == source) continue;
                const float best =
                    relax_cell(dist, closed, c % width, c / width, height, width, moves, diag_cost);
                if (best < dist[c]) {
                    dist[c] = best;
                    local = 1;
                }
            }
            changed = __syncthreads_or(local);
        }
        const int n_out = n_targets > 0 ? n_targets : cells;
        float* row = out + (size_t)pair * n_out;
        for (int t = threadIdx.x; t < n_out; t += THREADS) {
            const float d = dist[n_targets > 0 ? targets[t] : t];
            row[t] = d >= UNREACHED ? ICLR25_POS_INF : d;
        }
        __syncthreads();  // the shared field is reused by the next pair
    }
}
