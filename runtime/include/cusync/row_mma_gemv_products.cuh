// The tensor-core whole-rows GEMV's loop: a block of kRowMmaGemvThreads threads multiplies 8 weight rows, each read
// whole along K in 4 KB block-wide pieces (thread t at k = 2048 j + 8 t), by up to 8 tokens, each warp transposing
// its 512-byte share of every piece, and the tokens' matching chunks, through its own shared memory into mma.sync
// fragments (mma_gemv_fragments.cuh). Shared by the MLP's stage kernel (row_mma_gemv_stage_kernel.cuh: outputs through
// an activation) and the attention chain's hooked stage (hooked_rows_mma_gemv_kernel.cuh: tiles posted under a
// policy); the measurements behind the shape are in the first. Device code.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/mma_gemv_fragments.cuh"

namespace cusync {

inline constexpr int kRowMmaGemvWarps = 8;
inline constexpr int kRowMmaGemvThreads = kRowMmaGemvWarps * 32;
inline constexpr int kRowMmaGemvRows = 8;       // weight rows per block: one mma B tile
inline constexpr int kRowMmaGemvMaxTokens = 8;  // mma A rows that carry tokens (of 16)

// Dynamic shared memory of a block taking up to `tokens` tokens: per warp, the piece's 8 weight rows and `tokens`
// token rows of 512 bytes; then the warps' sums. Host + device.
CUSYNC_HOST_DEVICE constexpr int rowMmaGemvSharedBytes(int tokens) {
  return kRowMmaGemvWarps * (kRowMmaGemvRows + tokens) * 512 +
         kRowMmaGemvWarps * kRowMmaGemvMaxTokens * kRowMmaGemvRows * int(sizeof(float));
}

// The warps' sums behind the transpose buffers in `shared` (rowMmaGemvSharedBytes): [warp][token][row].
template <int kTokens>
__device__ __forceinline__ float (*rowMmaGemvWarpSums(uint4* shared))[kRowMmaGemvMaxTokens][kRowMmaGemvRows] {
  return reinterpret_cast<float(*)[kRowMmaGemvMaxTokens][kRowMmaGemvRows]>(
      shared + kRowMmaGemvWarps * (kRowMmaGemvRows + kTokens) * 32);
}

namespace detail {

// Multiplies the block's 8 rows by `m` (<= kTokens) tokens over K = k and leaves each warp's sums in
// rowMmaGemvWarpSums(shared)[warp][token][row] (no barrier after: the caller's). rowChunk(r, piece): this thread's
// 16 bytes of row r in 4 KB piece `piece` (only called inside K). tokenChunk(token, offset): 16 bytes of the token at
// element offset `offset` of its row. beforeTokens(): called once the first weight batch is in flight, before any
// token is read (where a stage waits for its producer).
//
// kUnroll: pieces of each row loaded together per batch (a thread holds 8 kUnroll weight chunks and kTokens kUnroll
// token chunks in registers).
template <int kUnroll, int kTokens, class RowChunk, class TokenChunk, class BeforeTokens>
__device__ __forceinline__ void rowMmaGemvProducts(int k, int m, uint4* shared, RowChunk rowChunk,
                                                   TokenChunk tokenChunk, BeforeTokens beforeTokens) {
  constexpr int kRows = kRowMmaGemvRows;
  constexpr int kPiece = kRowMmaGemvThreads * 8;  // k of one block-wide load of one row
  static_assert(kTokens >= 1 && kTokens <= kRowMmaGemvMaxTokens, "the mma's A tile carries up to 8 tokens");
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, g = lane / 4, t = lane % 4;
  // This warp's pieces: those whose 256-k share for this warp starts inside K. No block barrier runs in the loop, so
  // on a short last piece (LLaMA's K = 2752: 2 pieces, the second a third full) a warp past K stops instead of
  // transposing and multiplying zeros. Loads past K (inside a warp's share) read nothing and store zeros.
  const int warpStart = warp * 256;
  const int pieces = warpStart < k ? (k - warpStart + kPiece - 1) / kPiece : 0;
  uint4 v[kUnroll][kRows], x[kUnroll][kTokens];
  const auto loadPiece = [&](int u, int piece) {
    const bool inside = piece * kPiece + 8 * tid < k;
#pragma unroll
    for (int r = 0; r < kRows; ++r) v[u][r] = inside ? __ldcs(rowChunk(r, piece)) : uint4{};
  };
  const auto loadTokens = [&](int u, int piece) {
    const std::size_t offset = std::size_t(piece) * kPiece + 8 * tid;
#pragma unroll
    for (int token = 0; token < kTokens; ++token)
      x[u][token] = token < m && offset < std::size_t(k) ? tokenChunk(token, offset) : uint4{};
  };

  // Per warp (rowMmaGemvSharedBytes): the piece's 8 weight rows, then its kTokens token rows.
  uint4* const mine = shared + warp * (kRows + kTokens) * 32;
  uint4* const tokens = mine + kRows * 32;
  // Lanes of token rows g >= m multiply zeros (A rows past the tokens).
  const bool hasToken = g < m;
  float acc[4] = {};
  // Multiplies the piece in this warp's transpose buffer: lane (g, t) reads chunks t + 4 j of weight row g and token g.
  const auto multiplyPiece = [&] {
#pragma unroll 2
    for (int j = 0; j < 8; ++j) {
      const uint4 w = mine[transposeSlot(g, t + 4 * j)];
      const uint4 a = hasToken ? tokens[transposeSlot(g, t + 4 * j)] : uint4{};
      mmaTokensByRows(acc, a.x, a.y, w.x, w.y);
      mmaTokensByRows(acc, a.z, a.w, w.z, w.w);
    }
  };

  // The first batch's weights load before beforeTokens(): they depend on nothing.
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) loadPiece(u, u);
  beforeTokens();
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) loadTokens(u, u);
  for (int first = 0; first < pieces; first += kUnroll) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (first + u >= pieces) break;
      __syncwarp();  // the previous piece's fragment reads are done
#pragma unroll
      for (int r = 0; r < kRows; ++r) mine[transposeSlot(r, lane)] = v[u][r];
#pragma unroll
      for (int token = 0; token < kTokens; ++token)
        if (token < m) tokens[transposeSlot(token, lane)] = x[u][token];
      // Refill the registers at once: the next batch's piece streams while this one is multiplied.
      if (first + kUnroll + u < pieces) {
        loadPiece(u, first + kUnroll + u);
        loadTokens(u, first + kUnroll + u);
      }
      __syncwarp();
      multiplyPiece();
    }
  }

  // acc[0..1]: token g, rows 2t and 2t + 1 (c2, c3 belong to the empty token rows 8-15).
  auto* const warpSums = rowMmaGemvWarpSums<kTokens>(shared);
  warpSums[warp][g][2 * t] = acc[0];
  warpSums[warp][g][2 * t + 1] = acc[1];
}

}  // namespace detail
}  // namespace cusync
