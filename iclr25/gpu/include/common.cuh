// Shared helpers for every iclr25 kernel (on the include path of all of them).
#pragma once

#define ICLR25_CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

namespace iclr25 {

// Warp-wide sum with shuffles (all 32 lanes participate).
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// Warp-wide max with shuffles (all 32 lanes participate).
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

}  // namespace iclr25
