// Fused CSR SpMM + tanh: Y = tanh(C + A X), the pre-activation of one PH-DGN half-step.
//
// A: (n, n) in CSR with int32 row pointers `crow` (n + 1) and column indices `col` (nnz),
// float32 values `val` (nnz). X, C, Y: (n, d) row-major float32 (X the messages s Vᵀ, C the
// self term s Wᵀ + b). One warp per row u: the lanes read 32 of the row's (col, val) pairs
// at a time, coalesced, and broadcast each pair with a shuffle; every lane then owns the
// features f = lane, lane + 32, … (at most PER_LANE · 32 = 256 of them, held in
// registers), so the accumulation over the row's nonzeros never leaves registers and the
// sum, the + C and the tanh are written once. Empty rows give tanh(C). Rows past n return
// before any shuffle (whole warps: the row is uniform across a warp).
#include "common.cuh"

namespace {
constexpr int WARPS_PER_BLOCK = 8;
constexpr int PER_LANE = 8;  // d <= 32 * PER_LANE = 256
}  // namespace

extern "C" __global__ void __launch_bounds__(32 * WARPS_PER_BLOCK)
csr_spmm_tanh_f32(const int* __restrict__ crow, const int* __restrict__ col,
                  const float* __restrict__ val, const float* __restrict__ X,
                  const float* __restrict__ C, float* __restrict__ Y, int n, int d) {
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * WARPS_PER_BLOCK + (threadIdx.x >> 5);
    if (row >= n) return;  // uniform over the warp

    float acc[PER_LANE];
#pragma unroll
    for (int k = 0; k < PER_LANE; ++k) acc[k] = 0.f;

    const int start = crow[row], end = crow[row + 1];
    for (int base = start; base < end; base += 32) {
        const int idx = base + lane;
        const int my_col = idx < end ? col[idx] : 0;
        const float my_val = idx < end ? val[idx] : 0.f;
        const int count = min(32, end - base);
        for (int j = 0; j < count; ++j) {
            const int v = __shfl_sync(0xffffffffu, my_col, j);
            const float a = __shfl_sync(0xffffffffu, my_val, j);
            const float* x_row = X + (long long)v * d;
#pragma unroll
            for (int k = 0; k < PER_LANE; ++k) {
                const int f = lane + 32 * k;
                if (f < d) acc[k] = fmaf(a, __ldg(x_row + f), acc[k]);
            }
        }
    }

    const long long off = (long long)row * d;
#pragma unroll
    for (int k = 0; k < PER_LANE; ++k) {
        const int f = lane + 32 * k;
        if (f < d) Y[off + f] = tanhf(C[off + f] + acc[k]);
    }
}
