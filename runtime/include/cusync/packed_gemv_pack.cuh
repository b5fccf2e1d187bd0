// Packs W [n, k] fp16 row-major into the tensor-core GEMV's fragment order (packed_gemv_layout.h): a grid-stride
// copy of 16-byte vectors, zeros past K. Run once per weight matrix, before the chain's runs (not inside a captured
// graph: the packed copy is the chain's own operand). Device kernel + host launcher.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cusync/error.h"
#include "cusync/packed_gemv_layout.h"

namespace cusync {

// A template so that every translation unit including this header may define it (as wait_kernel.cuh's).
template <int = 0>
__global__ void packGemvWeightsKernel(const __half* w, uint4* packed, int n, int k, std::uint32_t pairedGroupRows,
                                      int rows) {
  const std::size_t total = packedGemvVectors(n, k, rows);
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const PackedGemvSource source = packedGemvSource(i, k, pairedGroupRows, rows);
    packed[i] = source.k < k ? *reinterpret_cast<const uint4*>(w + std::size_t(source.row) * k + source.k) : uint4{};
  }
}

// `packed` holds packedGemvVectors(n, k, rows) vectors for blocks of `rows` (8 or 16) rows; n a multiple of `rows`,
// k of 8; paired, pairedGroupRows a multiple of rows / 2 and n of whole groups (each 2 pairedGroupRows rows: a cut
// group's up rows would lie past W).
inline void packGemvWeights(const __half* w, uint4* packed, int n, int k, std::uint32_t pairedGroupRows,
                            cudaStream_t stream, int rows) {
  if ((rows != 8 && rows != 16) || n % rows != 0 || k % 8 != 0 ||
      (pairedGroupRows != 0 && (pairedGroupRows % std::uint32_t(rows / 2) != 0 ||
                                std::uint32_t(n) % (2 * pairedGroupRows) != 0)))
    throw Error("packGemvWeights: W is " + std::to_string(n) + " x " + std::to_string(k) + " (pairing groups of " +
                std::to_string(pairedGroupRows) + "); blocks of " + std::to_string(rows) +
                " rows need 8 or 16 rows, rows in multiples of it, K in multiples of 8 and pairing groups in "
                "multiples of half a block that W's rows fill whole");
  packGemvWeightsKernel<><<<1024, 256, 0, stream>>>(w, packed, n, k, pairedGroupRows, rows);
  CUSYNC_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cusync
