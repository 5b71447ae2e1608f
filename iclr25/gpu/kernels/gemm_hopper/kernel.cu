// GEMM C = op(A) @ op(B) on Hopper (sm_90a): persistent, TMA in and out, warp-specialised
// wgmma, optional 2-CTA clusters with multicast B loads. bf16 or fp16 in, fp32 accumulation,
// 16-bit out. Any M, N, K >= 1 whose rows TMA can describe (16-byte aligned row strides).
//
// Operands (LAYOUT = A then B, "n" as stored row-major, "t" given transposed):
//   A "n": (M, K) row-major (K-major for wgmma);  A "t": the (K, M) row-major matrix whose
//   transpose is A (M-major, the descriptor's transpose bit); B "n": (K, N) row-major
//   (N-major); B "t": the (N, K) row-major W of x @ W.T (K-major). No operand is copied.
//
// Block: 3 warpgroups, 128 x 256 output tile, 64-deep k-tiles in a 3-stage ring.
//   Producer (warpgroup 0, one thread): for every tile the block owns, for every k-tile:
//   wait until the stage is free ("empty" mbarrier: both consumer warpgroups of every CTA
//   of the cluster released it), arm its "full" mbarrier with the stage's bytes, issue the
//   TMA loads. Boxes that stick out of the matrix are zero-filled by TMA, so edge tiles and
//   a K that is not a multiple of 64 need no special case.
//   Consumers (warpgroups 1, 2): each a 64 x 256 slice in 128 fp32 registers per thread;
//   per k-tile: wait "full", four wgmma m64n256k16 from shared memory, release the
//   previous k-tile's stage once its MMAs retired. Epilogue: registers -> a swizzled
//   staging buffer -> TMA stores (clipped at the matrix edge: the predicated store), left
//   in flight while the next tile's main loop runs; the buffer is reused only after the
//   store has read it (cp.async.bulk.wait_group.read).
//   Persistent: gridDim.x = the SM count (in clusters); block b takes work items
//   b / CLUSTER, + gridDim.x / CLUSTER, ... in grouped order (hopper.cuh, layout).
//   CLUSTER = 2: the two CTAs of a cluster compute vertically adjacent tiles with the same
//   B tile; each loads one half of B and multicasts it to both, halving B's L2 traffic.
//
// Index maps (descriptors, swizzle, accumulator fragment, staging, scheduler, ring parity)
// are the host-testable functions of hopper.cuh, checked on the CPU by
// tests/gpu/test_hopper_layout.py. The public path uses this kernel only after it passed
// its self-check on the device (iclr25/gpu/selfcheck.py).
#include "hopper.cuh"
#include "tk_tiles.cuh"

namespace {
using namespace hopper;
#ifndef GEMM_STAGES
#define GEMM_STAGES 3
#endif
#ifndef GEMM_GROUP_M
#define GEMM_GROUP_M 8
#endif
constexpr int BM = 128, BN = 256, BK = 64, STAGES = GEMM_STAGES, THREADS = 384;
constexpr int GROUP_M = GEMM_GROUP_M;
constexpr int A_BYTES = layout::GEMM_A_BYTES, B_BYTES = layout::GEMM_B_BYTES;  // 16 + 32 KiB
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int C_SLICE_BYTES = 64 * BN * 2;  // one consumer's 64 x 256 staging buffer
constexpr int C_BYTES = 2 * C_SLICE_BYTES;

// wgmma m64n256k16 with fp32 accumulators d[0..127] (+=), A and B from shared memory;
// TA / TB are the transpose immediates ("1": MN-major operand).
#define HP_D8(i)                                                                          \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
        "+f"(d[i + 6]), "+f"(d[i + 7])
#define HP_WGMMA_M64N256K16(TYPE, TA, TB)                                                    \
    asm volatile(                                                                            \
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                           \
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " {"                    \
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "             \
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "   \
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "   \
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "   \
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "   \
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "   \
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, "               \
        "%108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, "           \
        "%120, %121, %122, %123, %124, %125, %126, %127"                                     \
        "}, %128, %129, p, 1, 1, " TA ", " TB ";\n}\n"                                       \
        : HP_D8(0), HP_D8(8), HP_D8(16), HP_D8(24), HP_D8(32), HP_D8(40), HP_D8(48),        \
          HP_D8(56), HP_D8(64), HP_D8(72), HP_D8(80), HP_D8(88), HP_D8(96), HP_D8(104),     \
          HP_D8(112), HP_D8(120)                                                             \
        : "l"(desc_a), "l"(desc_b))

template <class T, bool A_T, bool B_T>
struct Mma;
#define HP_MMA(T, NAME, A_T, B_T, TA, TB)                                                 \
    template <>                                                                           \
    struct Mma<T, A_T, B_T> {                                                             \
        __device__ __forceinline__ static void run(float (&d)[128], u64 desc_a, u64 desc_b) { \
            HP_WGMMA_M64N256K16(NAME, TA, TB);                                            \
        }                                                                                 \
    };
// A "n" is K-major (no transpose), A "t" M-major; B "n" is N-major (transpose), B "t" K-major.
HP_MMA(tk::bf16, "bf16", false, false, "0", "1")
HP_MMA(tk::bf16, "bf16", false, true, "0", "0")
HP_MMA(tk::bf16, "bf16", true, false, "1", "1")
HP_MMA(tk::bf16, "bf16", true, true, "1", "0")
HP_MMA(tk::f16, "f16", false, false, "0", "1")
HP_MMA(tk::f16, "f16", false, true, "0", "0")
HP_MMA(tk::f16, "f16", true, false, "1", "1")
HP_MMA(tk::f16, "f16", true, true, "1", "0")

struct Problem {
    int M, N, K, num_m, num_n, k_tiles, items, step;
};

__device__ __forceinline__ Problem problem(int M, int N, int K, int cluster) {
    Problem p;
    p.M = M, p.N = N, p.K = K;
    p.num_m = (M + BM - 1) / BM, p.num_n = (N + BN - 1) / BN, p.k_tiles = (K + BK - 1) / BK;
    p.items = layout::work_items(p.num_m, p.num_n, cluster);
    p.step = gridDim.x / cluster;
    return p;
}

// The producer thread: every k-tile of every tile of this block, through the ring.
template <bool A_T, bool B_T, int CLUSTER>
__device__ __forceinline__ void produce(const TensorMap& map_a, const TensorMap& map_b,
                                        const Problem& p, u32 base, u32 bars, u32 rank) {
    prefetch_map(map_a);
    prefetch_map(map_b);
    long long it = 0;
    for (int w = blockIdx.x / CLUSTER; w < p.items; w += p.step) {
        int tile_m, tile_n;
        layout::cluster_tile(w, p.num_m, p.num_n, GROUP_M, CLUSTER, rank, tile_m, tile_n);
        const int m0 = tile_m * BM, n0 = tile_n * BN;
        for (int kt = 0; kt < p.k_tiles; ++kt, ++it) {
            const int s = layout::ring_stage(it, STAGES);
            if (it >= STAGES) mbar_wait(bars + 8 * (STAGES + s), layout::empty_parity(it, STAGES));
            const u32 full = bars + 8 * s, a_dst = base + s * STAGE_BYTES, b_dst = a_dst + A_BYTES;
            const int k0 = kt * BK;
            mbar_expect_tx(full, STAGE_BYTES);
#pragma unroll
            for (int j = 0; j < layout::gemm_a_boxes(A_T); ++j) {
                const layout::Box box = layout::gemm_a_box(A_T, j, m0, k0);
                tma_load(a_dst + box.dst, map_a, full, box.c0, box.c1);
            }
            // B in two halves of 128 columns; with a cluster, rank r loads half r for both CTAs
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                if (h % CLUSTER != (int)rank) continue;
#pragma unroll
                for (int j = 0; j < layout::gemm_b_boxes_per_half(B_T); ++j) {
                    const layout::Box box = layout::gemm_b_box(B_T, h, j, n0, k0);
                    if (CLUSTER > 1)
                        tma_load_multicast(b_dst + box.dst, map_b, full, box.c0, box.c1,
                                           (unsigned short)((1 << CLUSTER) - 1));
                    else
                        tma_load(b_dst + box.dst, map_b, full, box.c0, box.c1);
                }
            }
        }
    }
}

template <int CLUSTER>
__device__ __forceinline__ void release(u32 empty_bar) {
#pragma unroll
    for (int r = 0; r < CLUSTER; ++r) {
        if (CLUSTER == 1)
            mbar_arrive(empty_bar);
        else
            mbar_arrive_cluster(empty_bar, (u32)r);
    }
}

// One consumer warpgroup's epilogue: accumulators -> staging (swizzled) -> TMA stores.
template <class T>
__device__ __forceinline__ void store_tile(const float (&d)[128], const TensorMap& map_c,
                                           u32 stage, int consumer, int t, int m0, int n0) {
    if (t == 0) bulk_wait_read();  // the previous tile's stores have read the buffer
    named_sync(1 + consumer, 128);
#pragma unroll
    for (int j = 0; j < 32; ++j) {
        const int row = layout::acc_row(t, 4 * j), col = layout::acc_col(t, 4 * j);
        const u32 lo = tk::dtype<T>::pack(d[4 * j], d[4 * j + 1]);
        const u32 hi = tk::dtype<T>::pack(d[4 * j + 2], d[4 * j + 3]);
        asm volatile("st.shared.u32 [%0], %1;" ::"r"(stage + layout::staged_offset(64, row, col)),
                     "r"(lo)
                     : "memory");
        asm volatile("st.shared.u32 [%0], %1;" ::"r"(stage + layout::staged_offset(64, row + 8, col)),
                     "r"(hi)
                     : "memory");
    }
    fence_async_shared();
    named_sync(1 + consumer, 128);
    if (t == 0) {
#pragma unroll
        for (int s = 0; s < BN / 64; ++s)
            tma_store(map_c, stage + s * 64 * layout::ROW_BYTES, n0 + 64 * s, m0 + 64 * consumer);
        bulk_commit();
    }
}

template <class T, bool A_T, bool B_T, int CLUSTER>
__device__ __forceinline__ void consume(const TensorMap& map_c, const Problem& p, u32 base,
                                        u32 bars, u32 c_base, u32 rank, int consumer, int t) {
    float d[128];
    long long it = 0;
    const u32 a_slice = layout::gemm_a_slice(A_T, consumer);
    for (int w = blockIdx.x / CLUSTER; w < p.items; w += p.step) {
        int tile_m, tile_n;
        layout::cluster_tile(w, p.num_m, p.num_n, GROUP_M, CLUSTER, rank, tile_m, tile_n);
#pragma unroll
        for (int i = 0; i < 128; ++i) d[i] = 0.f;
        for (int kt = 0; kt < p.k_tiles; ++kt, ++it) {
            const int s = layout::ring_stage(it, STAGES);
            mbar_wait(bars + 8 * s, layout::full_parity(it, STAGES));
            const u32 a_base = base + s * STAGE_BYTES + a_slice, b_base = base + s * STAGE_BYTES + A_BYTES;
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BK / 16; ++kk) {
                Mma<T, A_T, B_T>::run(d, layout::gemm_a_desc(A_T, a_base, kk),
                                      layout::gemm_b_desc(B_T, b_base, kk));
            }
            wgmma_commit();
            wgmma_wait<1>();  // k-tile it-1's MMAs have retired: release its stage
            if (kt > 0 && t == 0) release<CLUSTER>(bars + 8 * (STAGES + layout::ring_stage(it - 1, STAGES)));
        }
        wgmma_wait<0>();
        fence_operands(d);  // the epilogue reads d only after the MMAs retired
        if (p.k_tiles > 0 && t == 0) release<CLUSTER>(bars + 8 * (STAGES + layout::ring_stage(it - 1, STAGES)));
        store_tile<T>(d, map_c, c_base + consumer * C_SLICE_BYTES, consumer, t, tile_m * BM, tile_n * BN);
    }
    if (t == 0) bulk_wait_all();
}

template <class T, bool A_T, bool B_T, int CLUSTER>
__device__ __forceinline__ void gemm_body(const TensorMap& map_a, const TensorMap& map_b,
                                          const TensorMap& map_c, int M, int N, int K) {
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const u32 base = (smem_addr(smem_raw) + 1023u) & ~1023u;
    const u32 c_base = base + STAGES * STAGE_BYTES;
    const u32 bars = c_base + C_BYTES;  // full[s] at bars + 8 s, empty[s] at bars + 8 (STAGES + s)
    const int tid = threadIdx.x, warpgroup = tid >> 7;
    const u32 rank = CLUSTER > 1 ? cluster_rank() : 0u;
    const Problem p = problem(M, N, K, CLUSTER);

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(bars + 8 * s, 1);                       // the producer's arrival + bytes
            mbar_init(bars + 8 * (STAGES + s), layout::empty_arrivals(2, CLUSTER));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    if (CLUSTER > 1)
        cluster_sync();  // the peer's barriers exist before anything is multicast to them
    else
        __syncthreads();

    if (warpgroup == 0) {
        setmaxnreg_dec40();
        if (tid == 0) produce<A_T, B_T, CLUSTER>(map_a, map_b, p, base, bars, rank);
    } else {
        setmaxnreg_inc232();
        consume<T, A_T, B_T, CLUSTER>(map_c, p, base, bars, c_base, rank, warpgroup - 1, tid & 127);
    }
    if (CLUSTER > 1) cluster_sync();  // no CTA leaves while its peer may still signal it
}
}  // namespace

#define HP_GEMM_ENTRY(NAME, T, A_T, B_T, CLUSTER)                                              \
    extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)   \
        NAME(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, \
             const __grid_constant__ TensorMap map_c, int M, int N, int K) {                   \
        gemm_body<T, A_T, B_T, CLUSTER>(map_a, map_b, map_c, M, N, K);                         \
    }
#define HP_GEMM_LAYOUTS(DT, T, CLUSTER)                                      \
    HP_GEMM_ENTRY(gemm_hopper_##DT##_nn_c##CLUSTER, T, false, false, CLUSTER) \
    HP_GEMM_ENTRY(gemm_hopper_##DT##_nt_c##CLUSTER, T, false, true, CLUSTER)  \
    HP_GEMM_ENTRY(gemm_hopper_##DT##_tn_c##CLUSTER, T, true, false, CLUSTER)  \
    HP_GEMM_ENTRY(gemm_hopper_##DT##_tt_c##CLUSTER, T, true, true, CLUSTER)

HP_GEMM_LAYOUTS(bf16, tk::bf16, 1)
HP_GEMM_LAYOUTS(bf16, tk::bf16, 2)
HP_GEMM_LAYOUTS(f16, tk::f16, 1)
HP_GEMM_LAYOUTS(f16, tk::f16, 2)
