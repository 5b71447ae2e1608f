// Exact BP denoiser of a tree grammar (Random Hierarchy Model): one block per datum.
//
// Upward pass (leaves to root), for a node at level l with children c_1..c_s:
//     nu(a) ∝ sum_k w_l[a,k] prod_i nu_{c_i}(R_l[a,k,i])            (normalised per node)
// then posterior sampling root to leaves: the root from prior(a)·nu_root(a), every node
// with symbol a draws its rule k ∝ w_l[a,k] prod_i nu_{c_i}(R_l[a,k,i]) by inverse CDF on
// the uniform passed in (uniforms[b, 0] for the root, then level 0, 1, ... node by node),
// so this kernel and the numpy path (iclr25/core/diffusion_probe/bp.py) draw the same
// samples. The draw counts the k whose running sum is <= u·total, as numpy does.
//
// Layout (iclr25/gpu/kernels/rhm_bp/__init__.py builds it): meta[l*5 + {0..4}] =
// {vocab_l, m_l, rules offset, weights offset, message offset}; rules_l is (vocab_l, m_l,
// s) int32, weights_l (vocab_l, m_l) float32; messages of every level live in a per-datum
// scratch row of `total_msgs` floats; symbols of the current and next level in shared
// memory (2·d ints, dynamic).
#include "common.cuh"

#define RHM_META 5

__device__ __forceinline__ float rule_product(const int* __restrict__ rules, const float* __restrict__ M,
                                              int roff, int a, int m, int k, int s, int j, int coff,
                                              int vocab_out, float w) {
    float p = w;
    const int* r = rules + roff + (a * m + k) * s;
    for (int i = 0; i < s; ++i) p *= M[coff + (j * s + i) * vocab_out + r[i]];
    return p;
}

extern "C" __global__ void rhm_bp_sample(const float* __restrict__ leaf, const int* __restrict__ rules,
                                         const float* __restrict__ weights, const int* __restrict__ meta,
                                         const float* __restrict__ prior, const double* __restrict__ uniforms,
                                         float* __restrict__ msgs, int n, int depth, int s, int d,
                                         int total_msgs, int n_uniforms, long long* __restrict__ out_leaves,
                                         long long* __restrict__ out_root) {
    extern __shared__ int sym[];  // (2, d)
    const int b = blockIdx.x;
    if (b >= n) return;
    float* M = msgs + (size_t)b * total_msgs;
    const double* U = uniforms + (size_t)b * n_uniforms;

    // 1. leaf evidence, normalised
    const int v_leaf = meta[depth * RHM_META + 0], off_leaf = meta[depth * RHM_META + 4];
    for (int j = threadIdx.x; j < d; j += blockDim.x) {
        const float* src = leaf + ((size_t)b * d + j) * v_leaf;
        float total = 0.f;
        for (int a = 0; a < v_leaf; ++a) total += src[a];
        for (int a = 0; a < v_leaf; ++a) M[off_leaf + j * v_leaf + a] = total > 0.f ? src[a] / total : 0.f;
    }
    __syncthreads();

    // 2. upward messages, level depth-1 .. 0
    int nodes = d / s;
    for (int lv = depth - 1; lv >= 0; --lv) {
        const int vin = meta[lv * RHM_META + 0], m = meta[lv * RHM_META + 1];
        const int roff = meta[lv * RHM_META + 2], woff = meta[lv * RHM_META + 3];
        const int moff = meta[lv * RHM_META + 4];
        const int vout = meta[(lv + 1) * RHM_META + 0], coff = meta[(lv + 1) * RHM_META + 4];
        for (int idx = threadIdx.x; idx < nodes * vin; idx += blockDim.x) {
            const int j = idx / vin, a = idx % vin;
            float acc = 0.f;
            for (int k = 0; k < m; ++k) {
                const float w = weights[woff + a * m + k];
                if (w > 0.f) acc += rule_product(rules, M, roff, a, m, k, s, j, coff, vout, w);
            }
            M[moff + j * vin + a] = acc;
        }
        __syncthreads();
        for (int j = threadIdx.x; j < nodes; j += blockDim.x) {
            float total = 0.f;
            for (int a = 0; a < vin; ++a) total += M[moff + j * vin + a];
            for (int a = 0; a < vin; ++a) {
                const float x = M[moff + j * vin + a];
                M[moff + j * vin + a] = total > 0.f ? x / total : 0.f;
            }
        }
        __syncthreads();
        nodes /= s;
    }

    // 3. the root from prior(a)·nu_root(a)
    int* cur = sym;
    int* nxt = sym + d;
    if (threadIdx.x == 0) {
        const int classes = meta[0], off = meta[4];
        float total = 0.f;
        for (int a = 0; a < classes; ++a) total += prior[a] * M[off + a];
        const float threshold = (float)(U[0] * (double)total);
        float cum = 0.f;
        int count = 0;
        for (int a = 0; a < classes; ++a) {
            cum += prior[a] * M[off + a];
            if (cum <= threshold) ++count;
        }
        cur[0] = count < classes ? count : classes - 1;
        out_root[b] = cur[0];
    }
    __syncthreads();

    // 4. rules and children, level by level
    int offset_u = 1;
    nodes = 1;
    for (int lv = 0; lv < depth; ++lv) {
        const int m = meta[lv * RHM_META + 1];
        const int roff = meta[lv * RHM_META + 2], woff = meta[lv * RHM_META + 3];
        const int vout = meta[(lv + 1) * RHM_META + 0], coff = meta[(lv + 1) * RHM_META + 4];
        for (int j = threadIdx.x; j < nodes; j += blockDim.x) {
            const int a = cur[j];
            float total = 0.f;
            for (int k = 0; k < m; ++k)
                total += rule_product(rules, M, roff, a, m, k, s, j, coff, vout, weights[woff + a * m + k]);
            const float threshold = (float)(U[offset_u + j] * (double)total);
            float cum = 0.f;
            int count = 0;
            for (int k = 0; k < m; ++k) {
                cum += rule_product(rules, M, roff, a, m, k, s, j, coff, vout, weights[woff + a * m + k]);
                if (cum <= threshold) ++count;
            }
            const int k = count < m ? count : m - 1;
            for (int i = 0; i < s; ++i) nxt[j * s + i] = rules[roff + (a * m + k) * s + i];
        }
        __syncthreads();
        int* t = cur;
        cur = nxt;
        nxt = t;
        offset_u += nodes;
        nodes *= s;
    }
    for (int j = threadIdx.x; j < d; j += blockDim.x) out_leaves[(size_t)b * d + j] = cur[j];
}
