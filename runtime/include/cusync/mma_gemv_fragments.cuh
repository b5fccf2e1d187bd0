// The tensor-core GEMV's fragments: one mma.sync m16n8k16 multiplies up to 8 tokens (A rows 0-7; rows 8-15 zero) by
// 8 weight rows (B), after a warp has written the 8 rows' 512-byte pieces to a shared-memory buffer row by row and
// reads them back in fragment order (transposeSlot). Shared by the MLP's whole-rows GEMV
// (row_mma_gemv_stage_kernel.cuh) and the attention chain's hooked GEMV stage (hooked_mma_gemv_kernel.cuh). Device
// code.
//
// Fragment order: the reduction over k does not care in which order k is visited, so a thread's two B registers of
// one mma (logical k 2t..2t+1 and 2t+8..2t+9 of weight row g = lane / 4, t = lane % 4) may hold any four physical k,
// as long as its A registers (token g at the same logical k) hold the same four. Lane (g, t) takes the 16-byte chunks
// t, t + 4, ..., t + 28 of a 512-byte piece of weight row g and of token g, each feeding two mmas (mmaTokensByRows on
// .x/.y, then on .z/.w). Accumulators c0, c1 are token g's sums of rows 2t and 2t + 1; c2, c3 belong to the empty token
// rows 8-15 and stay zero.
#pragma once

#include <cstdint>

namespace cusync::detail {

// d += A B for one m16n8k16 with fp16 operands and fp32 accumulators (A: a0/a2 rows 0-7, a1/a3 rows 8-15).
__device__ __forceinline__ void mmaM16N8K16(float (&d)[4], std::uint32_t a0, std::uint32_t a1, std::uint32_t a2,
                                            std::uint32_t a3, std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// The same with up to 8 tokens as A (rows 0-7) and 8 weight rows as B; A's rows 8-15 are zero (a1 = a3 = 0).
__device__ __forceinline__ void mmaTokensByRows(float (&d)[4], std::uint32_t a0, std::uint32_t a2, std::uint32_t b0,
                                                std::uint32_t b1) {
  mmaM16N8K16(d, a0, 0u, a2, 0u, b0, b1);
}

// Where chunk `chunk` (of 32) of row `row` (of 8) lies in a warp's transpose buffer: rows of 32 chunks, chunk
// positions XOR-swizzled by 4 (row & 7) so that the fragment reads (lanes 4g..4g+3 read chunks t + 4j of row g, eight
// lanes per 16-byte phase) hit 32 distinct banks; the row-wise writes stay a permutation of one row's 512 bytes.
__device__ __forceinline__ int transposeSlot(int row, int chunk) { return row * 32 + (chunk ^ (4 * (row & 7))); }

}  // namespace cusync::detail
