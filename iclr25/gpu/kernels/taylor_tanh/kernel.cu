// Fused Taylor-mode tanh layer (PI-DION trunk, issue 27): elementwise over n values.
// Forward, from the pre-activations z, z' = dz/dx, z'' = d²z/dx² of one layer:
//   a = tanh z,  s = 1 - a²,  a' = s z',  a'' = s z'' - 2 a s z'²
// Backward, from the output gradients g, g1, g2 (w.r.t. a, a', a''):
//   dz   = g s - 2 a s (g1 z' + g2 z'') - 2 g2 s (s - 2 a²) z'²
//   dz'  = g1 s - 4 g2 a s z'
//   dz'' = g2 s
// float32, row-major, grid-stride loops; one thread per element.

extern "C" __global__ void __launch_bounds__(256)
taylor_tanh_fwd_f32(const float* __restrict__ z, const float* __restrict__ z1,
                    const float* __restrict__ z2, long long n, float* __restrict__ a,
                    float* __restrict__ a1, float* __restrict__ a2) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const float t = tanhf(z[i]);
        const float s = 1.f - t * t;
        const float d1 = z1[i];
        a[i] = t;
        a1[i] = s * d1;
        a2[i] = s * z2[i] - 2.f * t * s * d1 * d1;
    }
}

extern "C" __global__ void __launch_bounds__(256)
taylor_tanh_bwd_f32(const float* __restrict__ z, const float* __restrict__ z1,
                    const float* __restrict__ z2, const float* __restrict__ g,
                    const float* __restrict__ g1, const float* __restrict__ g2, long long n,
                    float* __restrict__ dz, float* __restrict__ dz1, float* __restrict__ dz2) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const float t = tanhf(z[i]);
        const float s = 1.f - t * t;
        const float d1 = z1[i], d2 = z2[i];
        const float h1 = g1[i], h2 = g2[i];
        dz[i] = g[i] * s - 2.f * t * s * (h1 * d1 + h2 * d2) - 2.f * h2 * s * (s - 2.f * t * t) * d1 * d1;
        dz1[i] = h1 * s - 4.f * h2 * t * s * d1;
        dz2[i] = h2 * s;
    }
}
