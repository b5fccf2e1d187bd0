// The packed weight layout of the tensor-core GEMV (packed_mma16_gemv_stage_kernel.cuh: 16 rows per block, the weights
// as the mma's A operand). Blocks of 8 rows, the weights as its B operand, are the layout of session 30's first packed
// kernel (measured slower at every M, removed) and of bench/mlp/few_token_gemv_probe.cu. W [n, k] fp16 is stored once,
// ahead of the runs, in the order the lanes use it as mma.sync fragments, so that every weight load is a coalesced
// 16-byte load per lane and nothing is transposed at run time. Host + device.
//
// A block owns kRows weight rows ("rows of block b": rows kRows b .. kRows b + kRows - 1, or for a paired SwiGLU GEMM
// the gate rows of outputs kRows/2 b .. and then their up rows, paired_weight_rows.h). Its K is cut into shares of
// 4 KB per warp: 256 k at 8 rows, 128 k at 16; warp w multiplies shares w, w + 8, ...; a share is steps of 32 k (8 at
// 8 rows, 4 at 16), and in step q lane (g, t) = (lane / 4, lane % 4) holds 8 halves at k = share k + 32 q + 8 t of
// row g (and, at 16 rows, of row g + 8 in the next 512 bytes), which feed two m16n8k16 mmas (mma_gemv_fragments.cuh:
// any four physical k per lane and mma, as long as the token fragment holds the same four). Vector (16 bytes) index
//   (b * shares + share) * 256 + (q * kRows / 8 + h) * 32 + lane,    shares = ceil(k / share k), h: row g + 8 h,
// so a warp's load is 512 contiguous bytes and a share 4 KB. Halves past K are zero (a short last share).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cusync/paired_weight_rows.h"
#include "cusync/tile.h"  // CUSYNC_HOST_DEVICE

namespace cusync {

inline constexpr int kPackedGemvRows = 8;        // weight rows per block of the 8-row layout: one mma B tile
inline constexpr int kPackedGemvStepK = 32;      // k per step (one 16-byte load per lane and row, two mmas)

// k per share of a kRows-row block: 4 KB per warp.
CUSYNC_HOST_DEVICE constexpr int packedGemvShareK(int rows) { return 2048 / rows; }

CUSYNC_HOST_DEVICE constexpr int packedGemvShares(int k, int rows) {
  return (k + packedGemvShareK(rows) - 1) / packedGemvShareK(rows);
}

// 16-byte vectors of the packed copy of W [n, k] in kRows-row blocks (n a multiple of kRows).
CUSYNC_HOST_DEVICE constexpr std::size_t packedGemvVectors(int n, int k, int rows) {
  return std::size_t(n / rows) * std::size_t(packedGemvShares(k, rows)) * 256;
}

// Where packed vector `index` comes from: the W row and the first k of its 8 halves; k >= K means zeros.
// pairedGroupRows: 0 for a plain GEMM; for a paired SwiGLU GEMM, W's gate/up pairing group (paired_weight_rows.h).
struct PackedGemvSource {
  std::uint32_t row;
  int k;
};
CUSYNC_HOST_DEVICE constexpr PackedGemvSource packedGemvSource(std::size_t index, int k,
                                                               std::uint32_t pairedGroupRows, int rows) {
  const int lane = int(index % 32), position = int(index / 32 % 8);
  const int rowGroups = rows / 8;  // 1 or 2: the 512-byte loads of one step
  const int q = position / rowGroups, h = position % rowGroups;
  const std::size_t blockShare = index / 256;
  const int shares = packedGemvShares(k, rows);
  const int share = int(blockShare % std::size_t(shares));
  const std::uint32_t block = std::uint32_t(blockShare / std::size_t(shares));
  const std::uint32_t r = std::uint32_t(lane / 4 + 8 * h);
  const std::uint32_t row = pairedGroupRows == 0 ? block * std::uint32_t(rows) + r
                                                 : pairedWeightRow(block, r, std::uint32_t(rows / 2), pairedGroupRows);
  return {row, packedGemvShareK(rows) * share + kPackedGemvStepK * q + 8 * (lane % 4)};
}

}  // namespace cusync
