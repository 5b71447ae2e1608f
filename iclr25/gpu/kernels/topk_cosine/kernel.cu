// Per-row top-k selection over one column block of a score matrix, merged with a
// running top-k: the selection half of "top-k cosine search" (the scores themselves
// come from a cuBLAS GEMM of unit-normalised queries and references).
//
// scores:   (q, n) row-major float32, the cosine scores of q queries against n
//           references whose global indices are col_offset .. col_offset + n - 1.
// run_vals: (q, k) float32, run_idx: (q, k) int32 - the running top-k of each row,
//           best first (-inf / -1 where empty). Read, then overwritten with the top-k
//           of (running list U this column block).
//
// One block of THREADS threads per row. Each thread keeps its own sorted list of k
// candidates in shared memory (layout [slot][thread] so that a warp touches 32
// consecutive words: no bank conflicts) and inserts the running entries j = tid,
// tid + THREADS, ... and the columns c = tid, tid + THREADS, ... into it. Then k rounds
// of a block-wide arg-max over the heads of the per-thread lists emit the top-k in
// order; the winning thread pops its head. "Better" means a larger score, ties broken
// by the smaller global index, so the result is deterministic; NaN counts as -inf.
// Guards: any q, n >= 0 and 1 <= k <= MAX_K (the wrapper checks k).
#include "common.cuh"

namespace {
constexpr int THREADS = 128;
constexpr int WARPS = THREADS / 32;

__device__ __forceinline__ bool better(float v1, int i1, float v2, int i2) {
    return v1 > v2 || (v1 == v2 && i1 >= 0 && (i2 < 0 || i1 < i2));
}

// Insert (v, i) into the sorted list (best first) of this thread; k slots, stride THREADS.
__device__ __forceinline__ void insert(float* vals, int* idx, int k, float v, int i) {
    const int tid = threadIdx.x;
    if (!better(v, i, vals[(k - 1) * THREADS + tid], idx[(k - 1) * THREADS + tid])) return;
    int slot = k - 1;
    while (slot > 0 && better(v, i, vals[(slot - 1) * THREADS + tid], idx[(slot - 1) * THREADS + tid])) {
        vals[slot * THREADS + tid] = vals[(slot - 1) * THREADS + tid];
        idx[slot * THREADS + tid] = idx[(slot - 1) * THREADS + tid];
        --slot;
    }
    vals[slot * THREADS + tid] = v;
    idx[slot * THREADS + tid] = i;
}
}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
topk_rows_merge_f32(const float* __restrict__ scores, int q, int n, int k, int col_offset,
                    float* __restrict__ run_vals, int* __restrict__ run_idx) {
    extern __shared__ float smem[];
    float* vals = smem;                              // (k, THREADS)
    int* idx = reinterpret_cast<int*>(smem + k * THREADS);  // (k, THREADS)
    __shared__ float warp_v[WARPS];
    __shared__ int warp_i[WARPS];
    __shared__ int warp_t[WARPS];
    __shared__ int winner;

    const int row = blockIdx.x;
    const int tid = threadIdx.x;
    if (row >= q) return;  // whole block leaves together

    for (int s = 0; s < k; ++s) {
        vals[s * THREADS + tid] = ICLR25_NEG_INF;
        idx[s * THREADS + tid] = -1;
    }
    float* row_vals = run_vals + (size_t)row * k;
    int* row_idx = run_idx + (size_t)row * k;
    for (int j = tid; j < k; j += THREADS) {
        if (row_idx[j] >= 0) insert(vals, idx, k, row_vals[j], row_idx[j]);
    }
    const float* row_scores = scores + (size_t)row * n;
    for (int c = tid; c < n; c += THREADS) {
        float v = row_scores[c];
        if (v != v) v = ICLR25_NEG_INF;  // NaN
        insert(vals, idx, k, v, col_offset + c);
    }
    __syncthreads();  // every thread has read its running entries before any is written

    int head = 0;
    const int lane = tid & 31, warp = tid >> 5;
    for (int out = 0; out < k; ++out) {
        float v = head < k ? vals[head * THREADS + tid] : ICLR25_NEG_INF;
        int i = head < k ? idx[head * THREADS + tid] : -1;
        int t = tid;
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            const float ov = __shfl_down_sync(0xffffffffu, v, offset);
            const int oi = __shfl_down_sync(0xffffffffu, i, offset);
            const int ot = __shfl_down_sync(0xffffffffu, t, offset);
            if (better(ov, oi, v, i)) { v = ov; i = oi; t = ot; }
        }
        if (lane == 0) { warp_v[warp] = v; warp_i[warp] = i; warp_t[warp] = t; }
        __syncthreads();
        if (tid == 0) {
            float bv = warp_v[0];
            int bi = warp_i[0], bt = warp_t[0];
            for (int w = 1; w < WARPS; ++w) {
                if (better(warp_v[w], warp_i[w], bv, bi)) { bv = warp_v[w]; bi = warp_i[w]; bt = warp_t[w]; }
            }
            row_vals[out] = bv;
            row_idx[out] = bi;
            winner = bi >= 0 ? bt : -1;
        }
        __syncthreads();
        if (tid == winner) ++head;
        __syncthreads();  // warp_* and winner are reused by the next round
    }
}
