// Shared helpers for every iclr25 kernel (on the include path of all of them).
#pragma once

#define ICLR25_CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
// -infinity as a float. NVRTC (CuPy) compiles without <math.h>, so INFINITY is undefined there.
#define ICLR25_NEG_INF (__int_as_float(0xff800000u))

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
