// The packed weight layout of the tensor-core GEMV (packed_mma_gemv_stage_kernel.cuh): W [n, k] fp16 stored once,
// ahead of the runs, in the order its lanes use it as mma.sync B fragments, so that every weight load is a coalesced
// 16-byte load per lane and nothing is transposed at run time. Host + device.
//
// A block owns 8 weight rows ("rows of block b": rows 8 b .. 8 b + 7, or for a paired SwiGLU GEMM the gate rows of
// outputs 4 b .. 4 b + 3 followed by their up rows, paired_weight_rows.h). Its K is cut into shares of 256; warp w
// multiplies shares w, w + 8, ...; a share is 8 steps of 32 k, and in step q lane (g, t) = (lane / 4, lane % 4) holds
// 8 halves of row g at k = 256 share + 32 q + 8 t, which feed two m16n8k16 mmas (mma_gemv_fragments.cuh: any four
// physical k per lane and mma, as long as the token fragment holds the same four). Vector (16 bytes) index
//   ((b * shares + share) * 8 + q) * 32 + lane,    shares = ceil(k / 256),
// so a warp's step is 512 contiguous bytes and a share 4 KB. Halves past K are zero (a short last share).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cusync/paired_weight_rows.h"
#include "cusync/tile.h"  // CUSYNC_HOST_DEVICE

namespace cusync {

inline constexpr int kPackedGemvRows = 8;        // weight rows per block: one mma B tile
inline constexpr int kPackedGemvShareK = 256;    // k per share (one warp's 8 steps)
inline constexpr int kPackedGemvStepK = 32;      // k per step (one 16-byte load per lane, two mmas)

CUSYNC_HOST_DEVICE constexpr int packedGemvShares(int k) { return (k + kPackedGemvShareK - 1) / kPackedGemvShareK; }

// 16-byte vectors of the packed copy of W [n, k] (n a multiple of 8).
CUSYNC_HOST_DEVICE constexpr std::size_t packedGemvVectors(int n, int k) {
  return std::size_t(n / kPackedGemvRows) * std::size_t(packedGemvShares(k)) * 8 * 32;
}

// Where packed vector `index` comes from: the W row and the first k of its 8 halves; k >= K means zeros.
// pairedGroupRows: 0 for a plain GEMM; for a paired SwiGLU GEMM, W's gate/up pairing group (paired_weight_rows.h).
struct PackedGemvSource {
  std::uint32_t row;
  int k;
};
CUSYNC_HOST_DEVICE constexpr PackedGemvSource packedGemvSource(std::size_t index, int k,
                                                               std::uint32_t pairedGroupRows) {
  const int lane = int(index % 32), q = int(index / 32 % 8);
  const std::size_t blockShare = index / 256;
  const int shares = packedGemvShares(k);
  const int share = int(blockShare % std::size_t(shares));
  const std::uint32_t block = std::uint32_t(blockShare / std::size_t(shares));
  const std::uint32_t g = std::uint32_t(lane / 4);
  const std::uint32_t row =
      pairedGroupRows == 0 ? block * kPackedGemvRows + g
                           : pairedWeightRow(block, g, kPackedGemvRows / 2, pairedGroupRows);
  return {row, kPackedGemvShareK * share + kPackedGemvStepK * q + 8 * (lane % 4)};
}

}  // namespace cusync
