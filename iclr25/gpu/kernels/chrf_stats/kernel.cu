// chrF statistics on the GPU: per-pair n-gram match counts, and bootstrap resample sums.
//
// chrf_pair_counts — one block per (hypothesis, reference) pair, everything in shared
// memory (see reference.py, emulate_block, for the same steps in numpy):
//   row layout  [hyp | N-1 zeros | ref | N-1 zeros | zeros up to capacity]
//   1. local ids: keys = symbol << 12 | position for the non-zero row entries (others
//      all ones), bitonic sort, rank the distinct symbols 1..a (block scan); a pair
//      with a >= 1024 distinct symbols sets overflow[p] (the host recomputes it);
//   2. window keys: (id_i .. id_{i+N-1}) << 1 | side, 10 bits per id, 0 where id_i = 0;
//   3. bitonic sort of the window keys;
//   4. for each order n the equal n-grams are consecutive; the thread at a group start
//      (its n-th id is not 0) scans the group, counts R (side bits) and H, and adds
//      min(H, R) to match and H*[R > 0] to covered.
// symbols: int32 > 0. capacity: a power of two >= the row length, 2 <= capacity <= 2048;
// dynamic shared memory: capacity * (8 + 4) bytes. match/cover: (n_pairs, orders) int64.
//
// bootstrap_sums — one block per resample r: sums[r, s] = Σ_i stats[idx[r, i], s]
// (stats: (n, S) int64 with S <= MAX_STATS, idx: (R, n) int32, sums: (R, S) int64).
#include "common.cuh"

namespace {
constexpr int THREADS = 256;
constexpr int LOCAL_BITS = 10;
constexpr int MAX_ORDERS = 6;
constexpr int MAX_STATS = 32;
constexpr int MAX_CAPACITY = 2048;  // 2048 * 12 bytes of dynamic shared memory
constexpr unsigned long long ALL_ONES = 0xffffffffffffffffull;

__device__ void bitonic_sort(unsigned long long* keys, int capacity) {
    for (int k = 2; k <= capacity; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int i = threadIdx.x; i < capacity; i += blockDim.x) {
                const int ixj = i ^ j;
                if (ixj > i) {
                    const unsigned long long a = keys[i], b = keys[ixj];
                    const bool ascending = (i & k) == 0;
                    if ((a > b) == ascending) {
                        keys[i] = b;
                        keys[ixj] = a;
                    }
                }
            }
            __syncthreads();
        }
    }
}

// Inclusive block scan of flags[0..capacity) in place (each thread owns a contiguous run).
__device__ void block_scan(int* flags, int capacity, int* partial) {
    const int per = capacity / blockDim.x > 0 ? capacity / blockDim.x : 1;
    const int begin = threadIdx.x * per;
    int sum = 0;
    for (int i = begin; i < begin + per && i < capacity; ++i) sum += flags[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int offset = 1; offset < blockDim.x; offset <<= 1) {  // Hillis-Steele over threads
        const int add = threadIdx.x >= offset ? partial[threadIdx.x - offset] : 0;
        __syncthreads();
        partial[threadIdx.x] += add;
        __syncthreads();
    }
    int run = threadIdx.x > 0 ? partial[threadIdx.x - 1] : 0;
    for (int i = begin; i < begin + per && i < capacity; ++i) {
        run += flags[i];
        flags[i] = run;
    }
    __syncthreads();
}
}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
chrf_pair_counts(const int* __restrict__ symbols, const long long* __restrict__ hyp_start,
                 const int* __restrict__ hyp_len, const long long* __restrict__ ref_start,
                 const int* __restrict__ ref_len, int n_pairs, int orders, int capacity,
                 long long* __restrict__ match_out, long long* __restrict__ cover_out,
                 int* __restrict__ overflow) {
    extern __shared__ unsigned long long smem[];
    unsigned long long* keys = smem;                            // (capacity)
    int* ids = reinterpret_cast<int*>(smem + capacity);         // (capacity)
    __shared__ int partial[THREADS];
    __shared__ unsigned long long acc_match[MAX_ORDERS];
    __shared__ unsigned long long acc_cover[MAX_ORDERS];
    __shared__ int distinct;

    const int p = blockIdx.x;
    if (p >= n_pairs) return;  // whole block leaves together
    const int lh = hyp_len[p], lr = ref_len[p], gap = orders - 1;
    const int ref_at = lh + gap;            // first reference position in the row
    const int row = lh + lr + 2 * gap;      // <= capacity (the host checks)

    // 1. local ids: sort (symbol << 12 | position), rank the distinct symbols
    for (int i = threadIdx.x; i < capacity; i += blockDim.x) {
        int s = 0;
        if (i < lh) s = symbols[hyp_start[p] + i];
        else if (i >= ref_at && i < ref_at + lr) s = symbols[ref_start[p] + (i - ref_at)];
        keys[i] = s > 0 ? ((unsigned long long)s << 12) | (unsigned long long)i : ALL_ONES;
    }
    if (threadIdx.x < MAX_ORDERS) {
        acc_match[threadIdx.x] = 0;
        acc_cover[threadIdx.x] = 0;
    }
    __syncthreads();
    bitonic_sort(keys, capacity);
    for (int i = threadIdx.x; i < capacity; i += blockDim.x) {
        const bool real = keys[i] != ALL_ONES;
        ids[i] = real && (i == 0 || (keys[i] >> 12) != (keys[i - 1] >> 12)) ? 1 : 0;
    }
    __syncthreads();
    block_scan(ids, capacity, partial);
    if (threadIdx.x == 0) distinct = ids[capacity - 1];
    // scatter ranks back to row positions (keys still hold the positions)
    int rank[MAX_CAPACITY / THREADS];  // this thread's ranks, in its strided order
    int count = 0;
    for (int i = threadIdx.x; i < capacity; i += blockDim.x) rank[count++] = ids[i];
    __syncthreads();
    for (int i = threadIdx.x; i < capacity; i += blockDim.x) ids[i] = 0;
    __syncthreads();
    count = 0;
    for (int i = threadIdx.x; i < capacity; i += blockDim.x) {
        const unsigned long long k = keys[i];
        if (k != ALL_ONES) ids[(int)(k & 0xfffull)] = rank[count];
        ++count;
    }
    __syncthreads();
    if (distinct >= (1 << LOCAL_BITS)) {
        if (threadIdx.x == 0) overflow[p] = 1;
        return;
    }

    // 2. window keys
    for (int i = threadIdx.x; i < capacity; i += blockDim.x) {
        unsigned long long key = 0;
        if (i < row && ids[i] != 0) {
            for (int j = 0; j < orders; ++j) {
                const int id = i + j < capacity ? ids[i + j] : 0;
                key |= (unsigned long long)id << (LOCAL_BITS * (orders - 1 - j) + 1);
            }
            key |= i >= ref_at ? 1ull : 0ull;
        }
        keys[i] = key;
    }
    __syncthreads();

    // 3. sort the windows
    bitonic_sort(keys, capacity);

    // 4. groups per order
    for (int n = 1; n <= orders; ++n) {
        const int shift = 1 + LOCAL_BITS * (orders - n);
        for (int i = threadIdx.x; i < capacity; i += blockDim.x) {
            const unsigned long long prefix = keys[i] >> shift;
            if ((prefix & ((1ull << LOCAL_BITS) - 1)) == 0) continue;  // not an n-gram
            if (i > 0 && (keys[i - 1] >> shift) == prefix) continue;   // not a group start
            int e = i, r = 0;
            while (e < capacity && (keys[e] >> shift) == prefix) {
                r += (int)(keys[e] & 1ull);
                ++e;
            }
            const int h = (e - i) - r;
            atomicAdd(&acc_match[n - 1], (unsigned long long)(h < r ? h : r));
            if (r > 0) atomicAdd(&acc_cover[n - 1], (unsigned long long)h);
        }
    }
    __syncthreads();
    if (threadIdx.x < orders) {
        match_out[(long long)p * orders + threadIdx.x] = (long long)acc_match[threadIdx.x];
        if (cover_out != nullptr)
            cover_out[(long long)p * orders + threadIdx.x] = (long long)acc_cover[threadIdx.x];
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
bootstrap_sums(const long long* __restrict__ stats, const int* __restrict__ idx, int n, int n_stats,
               int n_resamples, long long* __restrict__ sums) {
    __shared__ unsigned long long acc[MAX_STATS];
    const int r = blockIdx.x;
    if (r >= n_resamples) return;
    if (threadIdx.x < MAX_STATS) acc[threadIdx.x] = 0;
    __syncthreads();
    long long local[MAX_STATS];
#pragma unroll
    for (int s = 0; s < MAX_STATS; ++s) local[s] = 0;
    const int* row = idx + (long long)r * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const long long* st = stats + (long long)row[i] * n_stats;
#pragma unroll
        for (int s = 0; s < MAX_STATS; ++s)
            if (s < n_stats) local[s] += st[s];
    }
#pragma unroll
    for (int s = 0; s < MAX_STATS; ++s)
        if (s < n_stats) atomicAdd(&acc[s], (unsigned long long)local[s]);
    __syncthreads();
    if (threadIdx.x < n_stats) sums[(long long)r * n_stats + threadIdx.x] = (long long)acc[threadIdx.x];
}
