// The tensor-core whole-rows GEMV's loop with the weights streamed by cp.async into a per-warp ring of transpose slots
// instead of through registers: the same block shape, reads and fragments as row_mma_gemv_products.cuh (8 weight rows
// per block, read whole along K in 4 KB block-wide pieces, thread t at k = 2048 j + 8 t; each warp multiplies its
// 512-byte share of every piece on mma.sync), but each lane's 16-byte chunk of a piece is copied straight to the slot
// where the register loop would have stored it (transposeSlot), so the weights in flight hold no registers.
//
// Why: the register loop holds one 4 KB piece per row per warp in flight (8 registers per row and piece), 64 KB per
// SM at 2 blocks of 256 threads; more pieces did not fit 128 registers (session 27: 126 registers, spills in the
// 2-token instance). The CUDA-core whole-rows GEMV keeps 128 KB per SM in flight and reads GPT-3's MLP 6% faster at
// one token (70.7 against 75.1 us, session 27, call 4). A ring of S slots per warp keeps up to S pieces in flight
// per warp, in shared memory.
//
// A warp's pieces are only those its share of K reaches (k = 2048 j + 256 warp < K): no block barrier runs in the
// loop, so a warp past K on a short last piece (LLaMA's K = 2752: 2 pieces, the second a third full) stops instead
// of multiplying zeros.
//
// Commit groups: the first S pieces' weights are issued, one group each, before beforeTokens() (where a stage waits
// for its producer: they depend on nothing); then every piece commits exactly one more group (possibly empty) after
// it is multiplied, so piece j's group is complete once at most S - 1 newer groups are pending. The tokens' chunks
// still take registers, loaded a piece ahead (a thread holds kTokens of them). Device code.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/async_copy.cuh"
#include "cusync/mma_gemv_fragments.cuh"
#include "cusync/row_mma_gemv_products.cuh"

namespace cusync::detail {

// As rowMmaGemvProducts (same arguments and results: each warp's sums in rowMmaGemvWarpSums<kTokens, kSlots>(shared),
// no barrier after), with `shared` laid out as rowMmaGemvSharedBytes(kTokens, kSlots). rowChunk(r, piece) is also
// called for pieces past K (it must then still be an address of row r's first piece's layout: only its offset is
// used), and for a thread's chunk past K on the last piece (copied as zeros, not read).
template <int kSlots, int kTokens, class RowChunk, class TokenChunk, class BeforeTokens>
__device__ __forceinline__ void rowMmaGemvRingProducts(int k, int m, uint4* shared, RowChunk rowChunk,
                                                       TokenChunk tokenChunk, BeforeTokens beforeTokens) {
  constexpr int kRows = kRowMmaGemvRows;
  constexpr int kPiece = kRowMmaGemvThreads * 8;  // k of one block-wide load of one row
  static_assert(kSlots >= 1, "a ring of at least one slot");
  static_assert(kTokens >= 1 && kTokens <= kRowMmaGemvMaxTokens, "the mma's A tile carries up to 8 tokens");
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, g = lane / 4, t = lane % 4;
  // This warp's pieces: those whose 256-k share for this warp starts inside K.
  const int warpStart = warp * 256;
  const int pieces = warpStart < k ? (k - warpStart + kPiece - 1) / kPiece : 0;

  // Per warp (rowMmaGemvWarpBufferChunks): kTokens token rows, then kSlots slots of 8 weight rows.
  uint4* const tokens = shared + warp * rowMmaGemvWarpBufferChunks(kTokens, kSlots);
  uint4* const ring = tokens + kTokens * 32;
  const auto issuePiece = [&](int piece) {
    if (piece < pieces) {
      uint4* const slot = ring + (piece % kSlots) * kRows * 32;
      const bool inside = piece * kPiece + 8 * tid < k;
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        // Past K: zeros, from an address that exists (the row's start).
        const uint4* const source = inside ? rowChunk(r, piece) : rowChunk(r, 0) - tid;
        copyAsync16OrZero(slot + transposeSlot(r, lane), source, inside);
      }
    }
    commitAsyncCopies();  // one group per piece, empty past the warp's pieces: keeps the count uniform
  };
  uint4 x[kTokens];
  const auto loadTokens = [&](int piece) {
    const std::size_t offset = std::size_t(piece) * kPiece + 8 * tid;
#pragma unroll
    for (int token = 0; token < kTokens; ++token)
      x[token] = token < m && offset < std::size_t(k) ? tokenChunk(token, offset) : uint4{};
  };

  // Lanes of token rows g >= m multiply zeros (A rows past the tokens).
  const bool hasToken = g < m;
  float acc[4] = {};
#pragma unroll
  for (int piece = 0; piece < kSlots; ++piece) issuePiece(piece);
  beforeTokens();
  if (pieces > 0) loadTokens(0);
  for (int piece = 0; piece < pieces; ++piece) {
    __syncwarp();  // the previous piece's token fragment reads are done
#pragma unroll
    for (int token = 0; token < kTokens; ++token)
      if (token < m) tokens[transposeSlot(token, lane)] = x[token];
    if (piece + 1 < pieces) loadTokens(piece + 1);  // in flight while this piece is multiplied
    waitAsyncCopiesPending<kSlots - 1>();             // this lane's copies of the piece
    __syncwarp();                                     // every lane's copies and token stores
    const uint4* const slot = ring + (piece % kSlots) * kRows * 32;
#pragma unroll 2
    for (int j = 0; j < 8; ++j) {
      const uint4 w = slot[transposeSlot(g, t + 4 * j)];
      const uint4 a = hasToken ? tokens[transposeSlot(g, t + 4 * j)] : uint4{};
      mmaTokensByRows(acc, a.x, a.y, w.x, w.y);
      mmaTokensByRows(acc, a.z, a.w, w.z, w.w);
    }
    __syncwarp();  // every lane's fragment reads of the slot before it is refilled
    issuePiece(piece + kSlots);
  }
  waitAsyncCopies();  // nothing of this thread's left in flight when the block exits (only empty groups remain)

  // acc[0..1]: token g, rows 2t and 2t + 1 (c2, c3 belong to the empty token rows 8-15).
  auto* const warpSums = rowMmaGemvWarpSums<kTokens, kSlots>(shared);
  warpSums[warp][g][2 * t] = acc[0];
  warpSums[warp][g][2 * t + 1] = acc[1];
}

}  // namespace cusync::detail
