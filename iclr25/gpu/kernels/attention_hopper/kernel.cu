// Attention forward on Hopper (sm_90a), FlashAttention-3 / ThunderKittens-H100 design:
// O = softmax(scale Q K^T [causal]) V and the row log-sum-exp, wgmma for both products.
//
// Q: (B*Hq, n_q, D), K, V: (B*Hkv, n_kv, D), O: (B*Hq, n_q, D) contiguous 16-bit (bf16 or
// fp16), read through 3-D TMA maps (column, row, matrix), so a tile that sticks out of one
// head's rows reads zeros, not the next head; LSE: (B*Hq, n_q) fp32, natural log (null: not
// written). D = 64 or 128; GQA/MQA: query head h reads kv head h / (Hq / Hkv). Causal masking
// is top-left aligned (query i sees keys j <= i).
//
// Block: 3 warpgroups, 128 query rows of one head. Warpgroup 0 is the producer: one thread
// TMA-loads Q once and the K and V tiles (128 keys) into a 2-stage ring (full / empty
// mbarriers), then idles with 24 registers. Warpgroups 1 and 2 are consumers, 64 query rows
// each (240 registers): per key tile t
//   S_t = Q K_t^T        wgmma m64n128k16, Q and K from shared memory (K-major),
//   O  += P_{t-1} V_{t-1} wgmma m64nDk16, P from registers (the S accumulator reused as the A
//                        operand, as FlashAttention-3 does for 16-bit inputs), V MN-major,
// issued together; then the online softmax of S_t (log2 domain) runs while the P V product
// is still in flight, and O is rescaled only after it retired (the deferred rescale). The two
// consumers take turns issuing their products (named barriers: the "ping-pong" of FA3), so one
// warpgroup's softmax overlaps the other's matrix products. A stage is released once its P V
// product retired (one arrival per consumer).
//
// Index maps (descriptors, panels, accumulator fragment) are the host-testable functions of
// hopper.cuh, checked on the CPU by tests/gpu/test_hopper_layout.py. The public path uses
// this kernel only after it passed its self-check on the device (iclr25/gpu/selfcheck.py).
#include "hopper.cuh"
#include "tk_tiles.cuh"

namespace {
using namespace hopper;
constexpr int BQ = 128, BKV = 128, STAGES = 2, THREADS = 384;
constexpr float LN2 = 0.6931471805599453f;

template <int D>
struct Smem {
    static constexpr int PANELS = D / 64;
    static constexpr int Q_BYTES = PANELS * BQ * 128;     // 16 / 32 KiB
    static constexpr int KV_BYTES = PANELS * BKV * 128;   // one of K or V
    static constexpr int STAGE_BYTES = 2 * KV_BYTES;      // K then V
};

// wgmma m64n64k16, fp32 accumulators d[0..31] (+=), A and B from shared memory (K-major).
#define HP_WGMMA_SS_N64(TYPE) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {" \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
                 "}, %32, %33, p, 1, 1, 0, 0;\n}\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
                 : "l"(desc_a), "l"(desc_b))
// wgmma m64n64k16 with A from registers (a[0..3]) and B MN-major from shared memory.
#define HP_WGMMA_RS_N64(TYPE) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {" \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
                 "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b))
// wgmma m64n128k16, fp32 accumulators d[0..63] (+=), A and B from shared memory (K-major).
#define HP_WGMMA_SS_N128(TYPE) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {" \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
                 "}, %64, %65, p, 1, 1, 0, 0;\n}\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
                 : "l"(desc_a), "l"(desc_b))
// wgmma m64n128k16 with A from registers (a[0..3]) and B MN-major from shared memory.
#define HP_WGMMA_RS_N128(TYPE) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {" \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
                 "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b))

template <class T, int N>
struct Wgmma;
#define HP_ATTN_WGMMA(T, NAME, N)                                                             \
    template <>                                                                               \
    struct Wgmma<T, N> {                                                                      \
        __device__ __forceinline__ static void ss(float (&d)[N / 2], u64 desc_a, u64 desc_b) { \
            HP_WGMMA_SS_N##N(NAME);                                                           \
        }                                                                                     \
        __device__ __forceinline__ static void rs(float (&d)[N / 2], const u32 (&a)[4],       \
                                                  u64 desc_b) {                               \
            HP_WGMMA_RS_N##N(NAME);                                                           \
        }                                                                                     \
    };
HP_ATTN_WGMMA(tk::bf16, "bf16", 64)
HP_ATTN_WGMMA(tk::bf16, "bf16", 128)
HP_ATTN_WGMMA(tk::f16, "f16", 64)
HP_ATTN_WGMMA(tk::f16, "f16", 128)

struct Params {
    int n_q, n_kv, heads_q, heads_kv, causal;
    float scale_log2;
};

__device__ __forceinline__ int tile_count(int q0, const Params& p) {
    return tk::layout::kv_tile_count(q0, BQ, p.n_kv, BKV, p.causal);
}

template <int D>
__device__ __forceinline__ void produce(const TensorMap& map_q, const TensorMap& map_k,
                                        const TensorMap& map_v, u32 q_s, u32 kv_s, u32 bars,
                                        int q0, int bh, int bh_kv, const Params& p) {
    using S = Smem<D>;
    prefetch_map(map_q);
    prefetch_map(map_k);
    prefetch_map(map_v);
    mbar_expect_tx(bars, S::Q_BYTES);
#pragma unroll
    for (int c = 0; c < S::PANELS; ++c) tma_load_3d(q_s + c * BQ * 128, map_q, bars, 64 * c, q0, bh);
    const int tiles = tile_count(q0, p);
    for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        const u32 full = bars + 8 * (1 + s), empty = bars + 8 * (1 + STAGES + s);
        if (t >= STAGES) mbar_wait(empty, layout::empty_parity(t, STAGES));
        mbar_expect_tx(full, S::STAGE_BYTES);
        const u32 k_s = kv_s + s * S::STAGE_BYTES, v_s = k_s + S::KV_BYTES;
#pragma unroll
        for (int c = 0; c < S::PANELS; ++c) {
            tma_load_3d(k_s + c * BKV * 128, map_k, full, 64 * c, t * BKV, bh_kv);
            tma_load_3d(v_s + c * BKV * 128, map_v, full, 64 * c, t * BKV, bh_kv);
        }
    }
}

// Scale, mask and turn the scores of tile t into P (in place), updating the running max m,
// the thread-partial row sums l and the rescale factors alpha of the thread's two rows.
__device__ __forceinline__ void softmax_tile(float (&s)[BKV / 2], float (&m)[2], float (&l)[2],
                                             float (&alpha)[2], int row0, int kv0, int t128,
                                             bool need_mask, const Params& p) {
#pragma unroll
    for (int i = 0; i < BKV / 2; ++i) {
        float x = s[i] * p.scale_log2;
        if (need_mask) {
            const int row = row0 + layout::acc_row(t128, i), col = kv0 + layout::acc_col(t128, i);
            if (col >= p.n_kv || (p.causal && col > row)) x = ICLR25_NEG_INF;
        }
        s[i] = x;
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float mx = ICLR25_NEG_INF;
#pragma unroll
        for (int j = 0; j < BKV / 8; ++j) mx = fmaxf(mx, fmaxf(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]));
        mx = tk::quad_max(mx);
        const float m_new = fmaxf(m[h], mx);
        const float m_use = m_new == ICLR25_NEG_INF ? 0.f : m_new;  // all masked so far: no NaN
        alpha[h] = exp2f(m[h] - m_use);
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < BKV / 8; ++j) {
            s[4 * j + 2 * h] = exp2f(s[4 * j + 2 * h] - m_use);
            s[4 * j + 2 * h + 1] = exp2f(s[4 * j + 2 * h + 1] - m_use);
            sum += s[4 * j + 2 * h] + s[4 * j + 2 * h + 1];
        }
        l[h] = l[h] * alpha[h] + sum;
        m[h] = m_new;
    }
}

template <class T, int D>
__device__ __forceinline__ void store_out(tk::u16* o_g, float* lse, float (&o)[D / 2], const float (&m)[2],
                                          const float (&l)[2], int row0, int t128, const Params& p) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float total = tk::quad_sum(l[h]);
        const float inv = total > 0.f ? 1.f / total : 0.f;
        const int row = row0 + layout::acc_row(t128, 2 * h);
        if (lse != nullptr && (t128 & 3) == 0 && row < p.n_q)
            lse[row] = total > 0.f ? (m[h] + log2f(total)) * LN2 : ICLR25_NEG_INF;
        if (row >= p.n_q) continue;
#pragma unroll
        for (int j = 0; j < D / 8; ++j) {
            const int col = layout::acc_col(t128, 4 * j);
            *reinterpret_cast<u32*>(o_g + (long long)row * D + col) =
                tk::dtype<T>::pack(o[4 * j + 2 * h] * inv, o[4 * j + 2 * h + 1] * inv);
        }
    }
}

template <class T, int D>
struct Consumer {
    using S = Smem<D>;
    u32 q_s, kv_s, bars;
    int consumer, t128, row0, turn, other;
    const Params& p;

    __device__ __forceinline__ void issue_s(float (&sacc)[BKV / 2], int t) const {
        const u32 k_s = kv_s + (t % STAGES) * S::STAGE_BYTES;
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk)
            Wgmma<T, BKV>::ss(sacc, layout::attn_q_desc(q_s, consumer, kk), layout::attn_k_desc(k_s, BKV, kk));
        wgmma_commit();
    }
    __device__ __forceinline__ void issue_pv(float (&o)[D / 2], const u32 (&pa)[BKV / 16][4], int t) const {
        const u32 v_s = kv_s + (t % STAGES) * S::STAGE_BYTES + S::KV_BYTES;
#pragma unroll
        for (int kk = 0; kk < BKV / 16; ++kk) Wgmma<T, D>::rs(o, pa[kk], layout::attn_v_desc(v_s, BKV, kk));
        wgmma_commit();
    }
    // wait for tile t, take our turn, zero S
    __device__ __forceinline__ void begin(float (&sacc)[BKV / 2], int t) const {
        mbar_wait(bars + 8 * (1 + t % STAGES), layout::full_parity(t, STAGES));
        named_sync(turn, 256);
#pragma unroll
        for (int i = 0; i < BKV / 2; ++i) sacc[i] = 0.f;
    }
    __device__ __forceinline__ void pass_turn(int t, int tiles) const {
        if (consumer == 0 || t + 1 < tiles) named_arrive(other, 256);
    }
    __device__ __forceinline__ void release(int t) const {
        if (t128 == 0) mbar_arrive(bars + 8 * (1 + STAGES + t % STAGES));
    }
    // P_t from S_t (and the rescale of O and l): the softmax of tile t
    __device__ __forceinline__ void softmax(float (&sacc)[BKV / 2], float (&m)[2], float (&l)[2],
                                            float (&alpha)[2], int t) const {
        const int kv0 = t * BKV;
        const bool need_mask = tk::layout::tile_needs_mask(kv0, BKV, p.n_kv, row0, p.causal);
        softmax_tile(sacc, m, l, alpha, row0, kv0, t128, need_mask, p);
    }
};

template <class T>
__device__ __forceinline__ void pack_p(u32 (&pa)[BKV / 16][4], const float (&sacc)[BKV / 2]) {
#pragma unroll
    for (int kk = 0; kk < BKV / 16; ++kk) {
        pa[kk][0] = tk::dtype<T>::pack(sacc[8 * kk], sacc[8 * kk + 1]);
        pa[kk][1] = tk::dtype<T>::pack(sacc[8 * kk + 2], sacc[8 * kk + 3]);
        pa[kk][2] = tk::dtype<T>::pack(sacc[8 * kk + 4], sacc[8 * kk + 5]);
        pa[kk][3] = tk::dtype<T>::pack(sacc[8 * kk + 6], sacc[8 * kk + 7]);
    }
}

template <int N>
__device__ __forceinline__ void rescale(float (&o)[N], const float (&alpha)[2]) {
#pragma unroll
    for (int i = 0; i < N; ++i) o[i] *= alpha[(i >> 1) & 1];
}

// Tile 0 (S only), then the steady state (S_t with P_{t-1} V_{t-1} in flight during the
// softmax of tile t), then the last P V alone: no conditional wgmma wait anywhere.
template <class T, int D>
__device__ __forceinline__ void consume(u32 q_s, u32 kv_s, u32 bars, tk::u16* o_g, float* lse,
                                        int q0, int consumer, int t128, const Params& p) {
    const int tiles = tile_count(q0, p);
    const Consumer<T, D> c{q_s, kv_s, bars, consumer, t128, q0 + 64 * consumer,
                           1 + consumer, 2 - consumer, p};
    float o[D / 2], sacc[BKV / 2], alpha[2], m[2] = {ICLR25_NEG_INF, ICLR25_NEG_INF}, l[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
    u32 pa[BKV / 16][4];  // P of the previous tile as wgmma A fragments
    mbar_wait(bars, 0);   // Q landed
    if (tiles > 0) {
        if (consumer == 1) named_arrive(1, 256);  // consumer 0 goes first
        c.begin(sacc, 0);
        wgmma_fence();
        c.issue_s(sacc, 0);
        c.pass_turn(0, tiles);
        wgmma_wait<0>();
        fence_operands(sacc);
        c.softmax(sacc, m, l, alpha, 0);
        pack_p<T>(pa, sacc);
    }
    for (int t = 1; t < tiles; ++t) {
        c.begin(sacc, t);
        wgmma_fence();
        c.issue_s(sacc, t);
        c.issue_pv(o, pa, t - 1);
        c.pass_turn(t, tiles);
        wgmma_wait<1>();  // S_t is ready; P_{t-1} V_{t-1} may still run
        fence_operands(sacc);
        c.softmax(sacc, m, l, alpha, t);
        wgmma_wait<0>();  // P_{t-1} V_{t-1} retired: O and pa may change, the stage is free
        fence_operands(o);
        fence_operands(pa);
        c.release(t - 1);
        rescale(o, alpha);
        pack_p<T>(pa, sacc);
    }
    if (tiles > 0) {
        wgmma_fence();
        c.issue_pv(o, pa, tiles - 1);
        wgmma_wait<0>();
        fence_operands(o);
        c.release(tiles - 1);
    }
    store_out<T, D>(o_g, lse, o, m, l, q0 + 64 * consumer, t128, p);
}

template <class T, int D>
__device__ __forceinline__ void attn_body(const TensorMap& map_q, const TensorMap& map_k,
                                          const TensorMap& map_v, tk::u16* O, float* LSE, const Params& p) {
    using S = Smem<D>;
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const u32 q_s = (smem_addr(smem_raw) + 1023u) & ~1023u, kv_s = q_s + S::Q_BYTES;
    const u32 bars = kv_s + STAGES * S::STAGE_BYTES;  // q_full, full[STAGES], empty[STAGES]
    const int tid = threadIdx.x, warpgroup = tid >> 7;
    const int q_block = p.causal ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
    const int q0 = q_block * BQ, bh = blockIdx.y;
    const int bh_kv = (bh / p.heads_q) * p.heads_kv + (bh % p.heads_q) / (p.heads_q / p.heads_kv);
    if (tid == 0) {
        mbar_init(bars, 1);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(bars + 8 * (1 + s), 1);
            mbar_init(bars + 8 * (1 + STAGES + s), 2);  // one arrival per consumer warpgroup
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (warpgroup == 0) {
        setmaxnreg_dec24();
        if (tid == 0) produce<D>(map_q, map_k, map_v, q_s, kv_s, bars, q0, bh, bh_kv, p);
    } else {
        setmaxnreg_inc240();
        consume<T, D>(q_s, kv_s, bars, O + (long long)bh * p.n_q * D,
                      LSE == nullptr ? nullptr : LSE + (long long)bh * p.n_q, q0, warpgroup - 1,
                      tid & 127, p);
    }
}
}  // namespace

#define HP_ATTN_ENTRY(NAME, T, D)                                                                   \
    extern "C" __global__ void __launch_bounds__(THREADS, 1) NAME(                                  \
        const __grid_constant__ TensorMap map_q, const __grid_constant__ TensorMap map_k,            \
        const __grid_constant__ TensorMap map_v, tk::u16* O, float* LSE, int n_q, int n_kv,         \
        int heads_q, int heads_kv, float scale_log2, int causal) {                                  \
        const Params p{n_q, n_kv, heads_q, heads_kv, causal, scale_log2};                            \
        attn_body<T, D>(map_q, map_k, map_v, O, LSE, p);                                             \
    }

HP_ATTN_ENTRY(attn_hopper_bf16_d64, tk::bf16, 64)
HP_ATTN_ENTRY(attn_hopper_bf16_d128, tk::bf16, 128)
HP_ATTN_ENTRY(attn_hopper_f16_d64, tk::f16, 64)
HP_ATTN_ENTRY(attn_hopper_f16_d128, tk::f16, 128)
