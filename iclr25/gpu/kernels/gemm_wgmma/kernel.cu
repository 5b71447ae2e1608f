// GEMM C = A @ B on Hopper (sm_90a only): TMA loads, mbarrier pipeline, warp-specialised
// wgmma. bf16 or fp16 in, fp32 accumulation, 16-bit out.
//
// A: (M, K) row-major, B: (K, N) row-major, C: (M, N) row-major (ldc). The wrapper calls this
// kernel only when M % 128 == 0, N % 256 == 0, K % 64 == 0 and the rows are 16-byte
// aligned (TMA's stride rule); other shapes take the mma.sync kernel (gemm_bf16).
//
// Block: three warpgroups. Warpgroup 0 is the producer: one thread issues the TMA copies
// of each k-tile (A: one 64 x 128 box; B: four 64 x 64 boxes) into a STAGES-deep ring and
// arms that stage's "full" mbarrier with the byte count; the producer then gives its
// registers away (setmaxnreg.dec). Warpgroups 1 and 2 are consumers, each owning a 64 x 256
// slice of the 128 x 256 output tile in 128 fp32 registers per thread (setmaxnreg.inc):
// they wait on "full", issue four wgmma m64n256k16 straight from shared memory, and once
// the MMAs of the previous k-tile have retired, release its stage on the "empty" mbarrier
// (one arrival per consumer warpgroup), which the producer waits on before refilling it.
//
// Shared layouts (TMA's 128-byte swizzle = wgmma's): A stage = 128 rows of 128 bytes, unit u
// of row m at u ^ (m & 7); descriptor SBO = 1024 (8-row atoms), k16 steps advance the
// start by 32 B. B stage = four 64-column strips of 64 k-rows x 128 bytes (8192 B each); in
// wgmma terms N-major ("transposed") with LBO = 8192 between 64-column atoms and SBO = 1024
// between 8-row atoms; k16 steps advance by 2048 B.
//
// The tensor maps are by-value __grid_constant__ parameters (TMA reads them from parameter
// space; no map in global memory). This is the measured kernel of the previous round with
// only that change; gemm_hopper (persistent, any shape, TMA stores, clusters) supersedes it
// and this one stays as its fallback. Like gemm_hopper, the public path uses it on a device
// only after its self-check passed there (iclr25/gpu/selfcheck.py).
#include "hopper.cuh"
#include "tk_tiles.cuh"

namespace {
#ifndef GEMM_STAGES
#define GEMM_STAGES 4
#endif
#ifndef GEMM_GROUP_M
#define GEMM_GROUP_M 8
#endif
constexpr int BM = 128, BN = 256, BK = 64, STAGES = GEMM_STAGES, THREADS = 384;
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2;  // 16 KiB + 32 KiB
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int GROUP_M = GEMM_GROUP_M;
using namespace hopper;
using hopper::u64;
using layout::smem_desc;

// wgmma m64n256k16, fp32 accumulators d[0..127] (+=), A and B from shared memory through
// their descriptors, B transposed (N-major); TYPE is the PTX input type, "bf16" or "f16".
#define ICLR25_D8(i)                                                                     \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
        "+f"(d[i + 6]), "+f"(d[i + 7])
#define ICLR25_WGMMA_M64N256K16(TYPE) \
    asm volatile( \
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " {" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, " \
    "%108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, " \
    "%120, %121, %122, %123, %124, %125, %126, %127" \
        "}, %128, %129, p, 1, 1, 0, 1;\n}\n" \
        : ICLR25_D8(0), ICLR25_D8(8), ICLR25_D8(16), ICLR25_D8(24), ICLR25_D8(32), \
          ICLR25_D8(40), ICLR25_D8(48), ICLR25_D8(56), ICLR25_D8(64), ICLR25_D8(72), \
          ICLR25_D8(80), ICLR25_D8(88), ICLR25_D8(96), ICLR25_D8(104), ICLR25_D8(112), \
          ICLR25_D8(120) \
        : "l"(desc_a), "l"(desc_b))

template <class T>
struct wgmma;

template <>
struct wgmma<tk::bf16> {
    __device__ __forceinline__ static void mma(float (&d)[128], u64 desc_a, u64 desc_b) {
        ICLR25_WGMMA_M64N256K16("bf16");
    }
};

template <>
struct wgmma<tk::f16> {
    __device__ __forceinline__ static void mma(float (&d)[128], u64 desc_a, u64 desc_b) {
        ICLR25_WGMMA_M64N256K16("f16");
    }
};

template <class T>
__device__ __forceinline__ void gemm_body(const TensorMap& map_a, const TensorMap& map_b,
                                          tk::u16* __restrict__ C, int M, int N, int K,
                                          long long ldc) {
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const tk::u32 base = (tk::smem_addr(smem_raw) + 1023u) & ~1023u;
    const tk::u32 bars = base + STAGES * STAGE_BYTES;  // full[s] at bars + 8s, empty[s] after
    const int tid = threadIdx.x, warpgroup = tid >> 7;
    int tile_m, tile_n;
    tk::layout::grouped_tile(blockIdx.x, M / BM, N / BN, GROUP_M, tile_m, tile_n);
    const int m0 = tile_m * BM, n0 = tile_n * BN, k_tiles = K / BK;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(bars + 8 * s, 1);                 // full: the producer's arrival + bytes
            mbar_init(bars + 8 * (STAGES + s), 2);      // empty: one per consumer warpgroup
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    if (warpgroup == 0) {  // producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid == 0) {
            prefetch_map(map_a);
            prefetch_map(map_b);
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int s = kt % STAGES;
                if (kt >= STAGES) mbar_wait(bars + 8 * (STAGES + s), ((kt / STAGES) & 1) ^ 1);
                const tk::u32 full = bars + 8 * s, a_dst = base + s * STAGE_BYTES;
                mbar_expect_tx(full, STAGE_BYTES);
                tma_load(a_dst, map_a, full, kt * BK, m0);
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    tma_load(a_dst + A_BYTES + j * 8192, map_b, full, n0 + 64 * j, kt * BK);
            }
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const int consumer = warpgroup - 1, warp = (tid >> 5) & 3, lane = tid & 31;
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.f;
    for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % STAGES;
        mbar_wait(bars + 8 * s, (kt / STAGES) & 1);
        const tk::u32 a_base = base + s * STAGE_BYTES + consumer * 64 * 128;
        const tk::u32 b_base = base + s * STAGE_BYTES + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
            wgmma<T>::mma(d, smem_desc(a_base + kk * 32, 16, 1024),
                          smem_desc(b_base + kk * 2048, 8192, 1024));
        wgmma_commit();
        wgmma_wait<1>();  // k-tile kt-1's MMAs have retired: release its stage
        if (kt > 0 && (tid & 127) == 0) mbar_arrive(bars + 8 * (STAGES + (kt - 1) % STAGES));
    }
    wgmma_wait<0>();

    const int row = m0 + consumer * 64 + warp * 16 + (lane >> 2);
    const int col = n0 + 2 * (lane & 3);
#pragma unroll
    for (int i = 0; i < 32; ++i) {
        *reinterpret_cast<tk::u32*>(C + row * ldc + col + 8 * i) =
            tk::dtype<T>::pack(d[4 * i], d[4 * i + 1]);
        *reinterpret_cast<tk::u32*>(C + (row + 8) * ldc + col + 8 * i) =
            tk::dtype<T>::pack(d[4 * i + 2], d[4 * i + 3]);
    }
}
}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_wgmma_bf16(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b,
                tk::u16* C, int M, int N, int K,
                long long ldc) {
    gemm_body<tk::bf16>(map_a, map_b, C, M, N, K, ldc);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_wgmma_f16(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b,
               tk::u16* C, int M, int N, int K,
               long long ldc) {
    gemm_body<tk::f16>(map_a, map_b, C, M, N, K, ldc);
}
