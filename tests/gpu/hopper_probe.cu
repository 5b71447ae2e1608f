// Host program that prints the index maps of iclr25/gpu/include/hopper.cuh (the functions
// the Hopper kernels call), so tests/gpu/test_hopper_layout.py can check them against a
// model of the PTX ISA and of TMA without a GPU. One record per line: "<table> <ints...>".
#include <cstdio>

#include "hopper.cuh"

using namespace hopper::layout;

static void print_desc(const char* name, unsigned long long d) {
    std::printf("%s %llu\n", name, d);
}

int main() {
    for (unsigned addr = 0; addr < 4096; addr += 16) std::printf("swz %u %u\n", addr, swizzle128(addr));
    for (int a_t = 0; a_t < 2; ++a_t) {
        for (int j = 0; j < gemm_a_boxes(a_t); ++j) {
            const Box b = gemm_a_box(a_t, j, 384, 192);
            std::printf("abox %d %d %u %d %d\n", a_t, j, b.dst, b.c0, b.c1);
        }
        for (int c = 0; c < 2; ++c) {
            const unsigned slice = gemm_a_slice(a_t, c);
            for (int kk = 0; kk < 4; ++kk)
                std::printf("adesc %d %d %d %llu\n", a_t, c, kk, gemm_a_desc(a_t, slice, kk));
        }
    }
    for (int b_t = 0; b_t < 2; ++b_t) {
        for (int h = 0; h < 2; ++h)
            for (int j = 0; j < gemm_b_boxes_per_half(b_t); ++j) {
                const Box b = gemm_b_box(b_t, h, j, 512, 192);
                std::printf("bbox %d %d %d %u %d %d\n", b_t, h, j, b.dst, b.c0, b.c1);
            }
        for (int kk = 0; kk < 4; ++kk) std::printf("bdesc %d %d %llu\n", b_t, kk, gemm_b_desc(b_t, 0u, kk));
    }
    for (int kk = 0; kk < 8; ++kk) {
        for (int c = 0; c < 2; ++c) std::printf("attn_q %d %d %llu\n", c, kk, attn_q_desc(0u, c, kk));
        std::printf("attn_k %d %llu\n", kk, attn_k_desc(0u, 128, kk));
        std::printf("attn_v %d %llu\n", kk, attn_v_desc(0u, 128, kk));
    }
    print_desc("kdesc_sample", kmajor_desc(0x2400, 1));
    print_desc("mndesc_sample", mnmajor_desc(0x2400, 1));
    for (int t = 0; t < 128; ++t)
        for (int i = 0; i < 128; ++i) std::printf("acc %d %d %d %d\n", t, i, acc_row(t, i), acc_col(t, i));
    for (int row = 0; row < 64; ++row)
        for (int col = 0; col < 256; col += 2) std::printf("stage %d %d %u\n", row, col, staged_offset(64, row, col));
    const int ms[] = {1, 2, 3, 5, 9, 17}, ns[] = {1, 2, 3, 7};
    for (int num_m : ms)
        for (int num_n : ns)
            for (int cluster = 1; cluster <= 2; ++cluster)
                for (int w = 0; w < work_items(num_m, num_n, cluster); ++w)
                    for (int rank = 0; rank < cluster; ++rank) {
                        int tm, tn;
                        cluster_tile(w, num_m, num_n, 8, cluster, rank, tm, tn);
                        std::printf("tile %d %d %d %d %d %d %d\n", num_m, num_n, cluster, w, rank, tm, tn);
                    }
    for (int cluster = 1; cluster <= 2; ++cluster)
        std::printf("empty_arrivals %d %d\n", cluster, empty_arrivals(2, cluster));
    for (int stages = 2; stages <= 4; ++stages)
        for (long long it = 0; it < 40; ++it)
            std::printf("ring %d %lld %d %d %d\n", stages, it, ring_stage(it, stages),
                        full_parity(it, stages), empty_parity(it, stages));
    return 0;
}
