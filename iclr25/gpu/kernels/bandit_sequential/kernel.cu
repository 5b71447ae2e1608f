// UCB1 and Gaussian Thompson sampling for many independent bandit executions.
//
// One thread per execution, looping over the T rounds. Each thread keeps its per-arm
// reward sums and pull counts in local arrays (k <= KMAX). Random numbers come from the
// counter-based generator of iclr25/counter_rng.py: the uniform for
// (execution key, counter c) is (mix64(key + (c + 1) * GOLDEN) >> 11 + 0.5) * 2^-53, with
// counter t * (k + 1) for the reward of round t and t * (k + 1) + 1 + i for Thompson's
// draw of arm i. The arithmetic follows the numpy path operation by operation (compiled
// with --fmad=false), so UCB1 with Bernoulli rewards reproduces it up to the last-ulp
// differences of log() between libm and CUDA.
//
// Inputs:  means (k) and gaps (k) float64; keys (runs) uint64; checkpoints (n_checkpoints)
//          1-based round counts, ascending.
// Outputs: pulls (runs, k) int64; regret (runs) float64; curve (runs, n_checkpoints)
//          float64 regret at the checkpoints; keys_out (runs, 2) uint64 trace hashes.
#include "common.cuh"

namespace {
constexpr int KMAX = 64;
constexpr unsigned long long GOLDEN = 0x9E3779B97F4A7C15ull;
constexpr unsigned long long HASH_P1 = 0x100000001B3ull;
constexpr unsigned long long HASH_P2 = 0xC2B2AE3D27D4EB4Full;

__device__ __forceinline__ unsigned long long mix64(unsigned long long x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

__device__ __forceinline__ double uniform01(unsigned long long key, long long counter) {
    const unsigned long long bits = mix64(key + (unsigned long long)(counter + 1) * GOLDEN) >> 11;
    return ((double)bits + 0.5) * 0x1.0p-53;
}

__device__ __forceinline__ double draw_reward(int bernoulli, double mu, double sigma, double u) {
    return bernoulli ? (u < mu ? 1.0 : 0.0) : mu + sigma * normcdfinv(u);
}

__device__ __forceinline__ void finish(int run, int k, const double* counts, double regret,
                                       unsigned long long h1, unsigned long long h2,
                                       long long* pulls, double* regret_out,
                                       unsigned long long* keys_out) {
    for (int a = 0; a < k; ++a) pulls[(size_t)run * k + a] = (long long)counts[a];
    regret_out[run] = regret;
    keys_out[2 * (size_t)run] = mix64(h1);
    keys_out[2 * (size_t)run + 1] = mix64(h2);
}
}  // namespace

// algo: 0 = UCB1, 1 = Thompson (Gaussian posteriors with scale prior_scale).
extern "C" __global__ void bandit_sequential(
    int algo, const double* __restrict__ means, const double* __restrict__ gaps, int k,
    long long horizon, int bernoulli, double sigma, double prior_scale,
    const unsigned long long* __restrict__ keys, int runs,
    const long long* __restrict__ checkpoints, int n_checkpoints,
    long long* __restrict__ pulls, double* __restrict__ regret_out,
    double* __restrict__ curve, unsigned long long* __restrict__ keys_out) {
    const int run = blockIdx.x * blockDim.x + threadIdx.x;
    if (run >= runs || k < 1 || k > KMAX) return;
    const unsigned long long key = keys[run];
    double sums[KMAX], counts[KMAX];
    for (int a = 0; a < k; ++a) sums[a] = counts[a] = 0.0;
    double regret = 0.0;
    unsigned long long h1 = 0ull, h2 = 0ull;
    int next_mark = 0;
    for (long long t = 0; t < horizon; ++t) {
        int arm = 0;
        if (algo == 0) {
            if (t < k) {
                arm = (int)t;
            } else {
                const double c = 2.0 * log((double)t);
                double best = __longlong_as_double((long long)0xfff0000000000000ull);  // -inf
                for (int a = 0; a < k; ++a) {
                    const double index = sums[a] / counts[a] + sqrt(c / counts[a]);
                    if (index > best) { best = index; arm = a; }
                }
            }
        } else {
            double best = __longlong_as_double((long long)0xfff0000000000000ull);  // -inf
            for (int a = 0; a < k; ++a) {
                const double z = normcdfinv(uniform01(key, t * (k + 1) + 1 + a));
                const double spread = prior_scale / sqrt(counts[a] + 1.0);
                const double draw = sums[a] / (counts[a] + 1.0) + spread * z;
                if (draw > best) { best = draw; arm = a; }
            }
        }
        const double u = uniform01(key, t * (k + 1));
        sums[arm] += draw_reward(bernoulli, means[arm], sigma, u);
        counts[arm] += 1.0;
        regret += gaps[arm];
        h1 = h1 * HASH_P1 + (unsigned long long)(arm + 1);
        h2 = h2 * HASH_P2 + (unsigned long long)(arm + 1);
        while (next_mark < n_checkpoints && checkpoints[next_mark] == t + 1) {
            curve[(size_t)run * n_checkpoints + next_mark] = regret;
            ++next_mark;
        }
    }
    finish(run, k, counts, regret, h1, h2, pulls, regret_out, keys_out);
}
