// The inner step of a skinny GEMM, D^T = W A^T for a few tokens: weight rows on mma.sync's M side (16 rows), up to
// 8 tokens on its N side, 32 of K per step. Device code, sm_80 and up.
//
// Why this shape: with M <= 8 tokens a GEMM is a weight stream (GPT-3's MLP at M = 1: 302 MB of weights, 0.4 MB of
// activations). wgmma puts the tokens on its 64-row M side, so a 64-row tile's shared-memory stages are mostly empty
// activation rows beside the weights (session 6's finding, docs/BENCHMARKS.md); cuBLAS and Triton's small-M kernels
// put the weights on the wide side instead, and so does this step: its shared-memory rows are weights and tokens.
//
// The k permutation: an m16n8k16 A fragment holds, in lane (g = lane / 4, q = lane % 4), rows g and g + 8 at logical
// k {2q, 2q+1, 2q+8, 2q+9}. A dot product does not care in which order its k are summed, as long as A and B use the
// same order, so logical k {2q, 2q+1} is mapped to physical k 8q + {0, 1} and {2q+8, 2q+9} to 8q + {2, 3} in the
// first mma of a step, and to 8q + {4..7} in the second. Lane q then needs physical k [8q, 8q + 8) of each of its
// rows: one 16-byte shared-memory load per row, and four lanes cover a row's 32 k contiguously. The token operand
// (B, k x tokens, token g) is read the same way: 16 bytes of token g's activations at k [8q, 8q + 8).
#pragma once

#include <cstdint>

namespace cusync::skinny {

inline constexpr int kKStep = 32;   // k per step of one warp: 4 lanes x 8 halves
inline constexpr int kTokens = 8;   // the mma's N: tokens one tile holds

// acc (rows g and g + 8 of 16 weight rows x tokens 2q, 2q + 1) += rowG . tokens and rowG8 . tokens over one step's
// 32 k: rowG, rowG8 hold physical k [8q, 8q + 8) of rows g and g + 8, tokens those of token g.
__device__ __forceinline__ void mmaStep(float (&acc)[4], uint4 rowG, uint4 rowG8, uint4 tokens) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
      : "r"(rowG.x), "r"(rowG8.x), "r"(rowG.y), "r"(rowG8.y), "r"(tokens.x), "r"(tokens.y));
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
      : "r"(rowG.z), "r"(rowG8.z), "r"(rowG.w), "r"(rowG8.w), "r"(tokens.z), "r"(tokens.w));
#endif
}

// Where lane `lane`'s accumulators belong: acc[0], acc[1] are row g, tokens 2q and 2q + 1; acc[2], acc[3] row g + 8.
struct AccumulatorPlace {
  int row;    // g: acc[2], acc[3] are row + 8
  int token;  // 2q: acc[1], acc[3] are token + 1
};
__device__ __forceinline__ AccumulatorPlace accumulatorPlace(int lane) { return {lane / 4, 2 * (lane % 4)}; }

}  // namespace cusync::skinny
