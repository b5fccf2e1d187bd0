// The tensor-core whole-rows GEMV's loop with the weights copied by TMA into a per-warp ring of slots: the same block
// shape, pieces and fragments as row_mma_gemv_products.cuh (8 weight rows per block, read whole along K in 4 KB
// block-wide pieces; each warp multiplies its 256-k share of every piece on mma.sync), but lane 0 of each warp copies
// its share of a piece as two TMA boxes of 4 rows x 256 k (the block's two 4-row halves, contiguous in W) into a slot,
// completed on the slot's mbarrier, kSlots pieces ahead. Device code, sm_90 (bulk_copy_ring.cuh).
//
// Why: the register loop keeps one piece per warp in flight (8 registers per row), 64 KB per SM at 2 blocks of 256
// threads, and a block of 8 rows then streams at the rate those bytes allow (session 29, call 2: 7-8 us per 128 KB
// LLaMA GEMM-1 block). The same ring filled by cp.async (16 bytes per lane and row) issued its first 2 pieces 3-5 us
// late and ran slower (calls 1 and 3); a TMA box is one instruction for 2 KB and holds no register.
//
// The slot lands dense (rows of 512 bytes), so lanes g and g + 1 of a fragment read hit the same banks (2-way); the
// loads are a quarter of the time the memory takes, by arithmetic. K past the matrix arrives as zeros (TMA's
// out-of-bounds fill), so a short last piece needs no masking; a warp whose share of a piece starts past K skips it.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/bulk_copy_ring.cuh"
#include "cusync/mma_gemv_fragments.cuh"
#include "cusync/row_mma_gemv_products.cuh"

namespace cusync {

// uint4s of one warp's buffers: `tokens` transposed token rows and `slots` slots of 8 weight rows (4 KB each).
CUSYNC_HOST_DEVICE constexpr int rowMmaGemvBoxWarpChunks(int tokens, int slots) {
  return tokens * 32 + slots * kRowMmaGemvRows * 32;
}

// Dynamic shared memory of a block: the warps' buffers, their slots' mbarriers, then the warps' sums. Host + device.
CUSYNC_HOST_DEVICE constexpr int rowMmaGemvBoxSharedBytes(int tokens, int slots) {
  return kRowMmaGemvWarps * rowMmaGemvBoxWarpChunks(tokens, slots) * 16 + kRowMmaGemvWarps * slots * 8 +
         kRowMmaGemvWarps * kRowMmaGemvMaxTokens * kRowMmaGemvRows * int(sizeof(float));
}

// The warps' sums [warp][token][row] behind the buffers and barriers.
template <int kTokens, int kSlots>
__device__ __forceinline__ float (*rowMmaGemvBoxWarpSums(uint4* shared))[kRowMmaGemvMaxTokens][kRowMmaGemvRows] {
  return reinterpret_cast<float(*)[kRowMmaGemvMaxTokens][kRowMmaGemvRows]>(
      reinterpret_cast<char*>(shared + kRowMmaGemvWarps * rowMmaGemvBoxWarpChunks(kTokens, kSlots)) +
      kRowMmaGemvWarps * kSlots * 8);
}

namespace detail {

// As rowMmaGemvProducts (each warp's sums left in rowMmaGemvBoxWarpSums<kTokens, kSlots>(shared), no barrier after),
// with `shared` 128-byte aligned and laid out as rowMmaGemvBoxSharedBytes. `map`: W's tensor map in boxes of 4 rows x
// 256 k (tensor_map.h, a kernel parameter); rows[0], rows[1]: W rows of the block's two 4-row halves.
template <int kSlots, int kTokens, class TokenChunk, class BeforeTokens>
__device__ __forceinline__ void rowMmaGemvBoxProducts(int k, int m, uint4* shared, const void* map,
                                                      const std::uint32_t (&rows)[2], TokenChunk tokenChunk,
                                                      BeforeTokens beforeTokens) {
  constexpr int kRows = kRowMmaGemvRows;
  constexpr int kPiece = kRowMmaGemvThreads * 8;  // k of one block-wide load of one row
  static_assert(kSlots >= 1, "a ring of at least one slot");
  static_assert(kTokens >= 1 && kTokens <= kRowMmaGemvMaxTokens, "the mma's A tile carries up to 8 tokens");
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, g = lane / 4, t = lane % 4;
  const int warpStart = warp * 256;
  const int pieces = warpStart < k ? (k - warpStart + kPiece - 1) / kPiece : 0;

  uint4* const tokens = shared + warp * rowMmaGemvBoxWarpChunks(kTokens, kSlots);
  uint4* const ring = tokens + kTokens * 32;
  std::uint64_t* const full =
      reinterpret_cast<std::uint64_t*>(shared + kRowMmaGemvWarps * rowMmaGemvBoxWarpChunks(kTokens, kSlots)) +
      warp * kSlots;
  if (lane == 0) {
#pragma unroll
    for (int slot = 0; slot < kSlots; ++slot) ring::init(full + slot, 1);
    ring::fenceInit();
  }
  __syncwarp();
  // Piece `piece` into slot piece % kSlots (lane 0): rows 0-3 at the slot's start, rows 4-7 2 KB later.
  const auto issue = [&](int piece) {
    if (lane == 0 && piece < pieces) {
      uint4* const slot = ring + (piece % kSlots) * kRows * 32;
      std::uint64_t* const barrier = full + piece % kSlots;
      ring::arriveExpectingBytes(barrier, kRows * 512);
      const int column = piece * kPiece + warpStart;
      ring::copyBox(slot, map, column, int(rows[0]), barrier);
      ring::copyBox(slot + (kRows / 2) * 32, map, column, int(rows[1]), barrier);
    }
  };
  uint4 x[kTokens];
  const auto loadTokens = [&](int piece) {
    const std::size_t offset = std::size_t(piece) * kPiece + 8 * tid;
#pragma unroll
    for (int token = 0; token < kTokens; ++token)
      x[token] = token < m && offset < std::size_t(k) ? tokenChunk(token, offset) : uint4{};
  };

  const bool hasToken = g < m;  // lanes of token rows g >= m multiply zeros (A rows past the tokens)
  float acc[4] = {};
#pragma unroll
  for (int piece = 0; piece < kSlots; ++piece) issue(piece);
  beforeTokens();
  if (pieces > 0) loadTokens(0);
  for (int piece = 0; piece < pieces; ++piece) {
    __syncwarp();  // the previous piece's token fragment reads are done
#pragma unroll
    for (int token = 0; token < kTokens; ++token)
      if (token < m) tokens[transposeSlot(token, lane)] = x[token];
    if (piece + 1 < pieces) loadTokens(piece + 1);  // in flight while this piece is multiplied
    ring::wait(full + piece % kSlots, std::uint32_t(piece / kSlots) & 1u);
    __syncwarp();  // every lane's token stores
    const uint4* const slot = ring + (piece % kSlots) * kRows * 32;
#pragma unroll 2
    for (int j = 0; j < 8; ++j) {
      const uint4 w = slot[g * 32 + t + 4 * j];  // row g's 512 bytes, dense
      const uint4 a = hasToken ? tokens[transposeSlot(g, t + 4 * j)] : uint4{};
      mmaTokensByRows(acc, a.x, a.y, w.x, w.y);
      mmaTokensByRows(acc, a.z, a.w, w.z, w.w);
    }
    __syncwarp();  // every lane's reads of the slot (their mmas consumed them) before lane 0 refills it
    issue(piece + kSlots);
  }

  // acc[0..1]: token g, rows 2t and 2t + 1 (c2, c3 belong to the empty token rows 8-15).
  auto* const warpSums = rowMmaGemvBoxWarpSums<kTokens, kSlots>(shared);
  warpSums[warp][g][2 * t] = acc[0];
  warpSums[warp][g][2 * t + 1] = acc[1];
}

}  // namespace detail
}  // namespace cusync
