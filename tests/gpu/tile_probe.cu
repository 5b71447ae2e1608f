// Host program that prints the index maps of iclr25/gpu/include/tk_tiles.cuh, so that
// tests/gpu/test_tile_layout.py can check the very functions the kernels use against the
// PTX ISA tables without a GPU. One record per line: "<table> <ints...>".
#include <cstdio>

#include "tk_tiles.cuh"

// lane_addr<Tile, QUAD> (the kernels' precomputed ldmatrix addresses) for every column base
// and every 16 x 16 block of the tile: "la rows cols quad col_base row0 dcol lane byte".
template <int ROWS, int COLS, bool QUAD>
void print_lane_addr() {
    using Tile = tk::st<ROWS, COLS>;
    for (int col_base = 0; col_base < COLS; col_base += 16)
        for (int lane = 0; lane < 32; ++lane) {
            const tk::lane_addr<Tile, QUAD> la(lane, col_base);
            for (int row0 = 0; row0 < ROWS; row0 += 16)
                for (int dcol = 0; col_base + dcol < COLS; dcol += 16)
                    std::printf("la %d %d %d %d %d %d %d %u\n", ROWS, COLS, QUAD ? 1 : 0, col_base,
                                row0, dcol, lane, la(0u, row0, dcol));
        }
}

template <int ROWS, int COLS>
void print_both_lane_addrs() {
    print_lane_addr<ROWS, COLS, true>();
    print_lane_addr<ROWS, COLS, false>();
}

int main() {
    using namespace tk::layout;
    for (int lane = 0; lane < 32; ++lane) {
        for (int i = 0; i < 8; ++i) std::printf("a %d %d %d %d\n", lane, i, a_row(lane, i), a_col(lane, i));
        for (int i = 0; i < 4; ++i) std::printf("b %d %d %d %d\n", lane, i, b_row(lane, i), b_col(lane, i));
        for (int i = 0; i < 4; ++i) std::printf("c %d %d %d %d\n", lane, i, c_row(lane, i), c_col(lane, i));
        std::printf("ldsm %d %d %d\n", lane, ldsm_row(lane), ldsm_col(lane));
        std::printf("ldsm_pair %d %d %d\n", lane, ldsm_pair_row(lane), ldsm_pair_col(lane));
    }
    const int widths[] = {8, 16, 32, 64, 128, 256, 512};
    for (int cols : widths)
        for (int row = 0; row < 128; ++row)
            for (int col = 0; col < cols; ++col)
                std::printf("swz %d %d %d %d\n", cols, row, col, swizzle_offset(cols, row, col));
    const int grids[][3] = {{1, 1, 8}, {3, 5, 8}, {8, 8, 8}, {17, 4, 8}, {32, 32, 8}, {9, 2, 4}, {5, 7, 1}};
    for (const auto& g : grids)
        for (int bid = 0; bid < g[0] * g[1]; ++bid) {
            int tm, tn;
            grouped_tile(bid, g[0], g[1], g[2], tm, tn);
            std::printf("group %d %d %d %d %d %d\n", g[0], g[1], g[2], bid, tm, tn);
        }
    for (int causal = 0; causal < 2; ++causal)
        for (int n_kv = 0; n_kv <= 200; n_kv += 7)
            for (int q0 = 0; q0 < 256; q0 += 64)
                std::printf("kvt %d %d %d %d\n", causal, n_kv, q0, kv_tile_count(q0, 64, n_kv, 64, causal));
    // tiles of gemm_bf16 (128x32, 32x128), attention_fwd and linear_attention (64x64, 64x128,
    // 128x64), and a narrow one (16x16) for the kSlots < 4 branch
    print_both_lane_addrs<128, 32>();
    print_both_lane_addrs<32, 128>();
    print_both_lane_addrs<64, 64>();
    print_both_lane_addrs<64, 128>();
    print_both_lane_addrs<128, 64>();
    print_both_lane_addrs<16, 16>();
    for (int causal = 0; causal < 2; ++causal)
        for (int n_kv = 1; n_kv <= 200; n_kv += 13)
            for (int kv0 = 0; kv0 < n_kv; kv0 += 64)
                for (int row0 = 0; row0 < 256; row0 += 16)
                    std::printf("mask %d %d %d %d %d\n", causal, n_kv, kv0, row0,
                                tile_needs_mask(kv0, 64, n_kv, row0, causal) ? 1 : 0);
    return 0;
}
