// The weight layout the fused LLaMA chain's first GEMM reads (paired_glu_epilogue.hpp): gate and up rows paired
// per tile. Host header (CUDA runtime API only).
//
// A Linear layer's weights [W1 | V] are stored N x K: rows [0, I) are the gate projection, rows [I, 2I) the up
// projection. The paired layout puts, for every group of `half` = TileN / 2 output columns g, the gate rows of g
// and then the up rows of g next to each other: rows [g*TileN, g*TileN + half) = gate rows [g*half, (g+1)*half),
// rows [g*TileN + half, (g+1)*TileN) = up rows [g*half, (g+1)*half). A GEMM tile of TileN columns then holds the
// gate and up columns of the same `half` outputs. Done once when weights are loaded (one copy of W1's bytes).
#pragma once

#include <cstddef>
#include <string>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cusync/error.h"

namespace cusync::examples {

// gateUp: [2 * intermediate, hidden] (gate rows, then up rows); paired: the same shape, rows paired as above.
inline void pairGateUpRows(const __half* gateUp, __half* paired, int intermediate, int hidden, int tileColumns,
                           cudaStream_t stream) {
  const int half = tileColumns / 2;
  if (tileColumns % 2 != 0 || half <= 0 || intermediate % half != 0)
    throw Error("pairGateUpRows: the intermediate size " + std::to_string(intermediate) +
                " is not a multiple of half the tile's columns (" + std::to_string(half) + ")");
  const std::size_t groupBytes = std::size_t(half) * hidden * sizeof(__half);  // `half` rows of K elements
  const std::size_t groups = std::size_t(intermediate / half);
  // Gate groups to the first half of each pair, up groups to the second: two strided 2-D copies.
  for (int which = 0; which < 2; ++which) {
    const __half* source = gateUp + std::size_t(which) * intermediate * hidden;
    char* destination = reinterpret_cast<char*>(paired) + which * groupBytes;
    CUSYNC_CUDA_CHECK(cudaMemcpy2DAsync(destination, 2 * groupBytes, source, groupBytes, groupBytes, groups,
                                        cudaMemcpyDeviceToDevice, stream));
  }
}

}  // namespace cusync::examples
