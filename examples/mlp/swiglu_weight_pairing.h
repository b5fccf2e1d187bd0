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

// The intermediate size a chain whose GEMM-1 tile has `tileColumns` columns runs at: the real one rounded up to a
// multiple of half the tile and of 8 (TMA needs the rows of S, GEMM 2's A, to start at multiples of 16 bytes). The
// added gate and up rows, and the added columns of W2, are zero: silu(0) * 0 = 0, so the output is unchanged, for
// 2 * (padded - intermediate) / intermediate more flops. Why: LLaMA-65B's 2752 = 43 x 64 admits only 128-column
// tiles unpadded, which move 1.5x cuBLAS's L2 traffic (docs/BENCHMARKS.md, session 6); padded to 2816 it admits 256,
// 176 and 88.
inline int pairedIntermediate(int intermediate, int tileColumns) {
  const int half = tileColumns / 2;
  if (tileColumns % 2 != 0 || half <= 0 || intermediate <= 0)
    throw Error("pairedIntermediate: a tile of " + std::to_string(tileColumns) +
                " columns cannot pair gate and up rows");
  int multiple = half;
  while (multiple % 8 != 0) multiple += half;  // the least common multiple of half and 8
  return (intermediate + multiple - 1) / multiple * multiple;
}

// gateUp: [2 * intermediate, hidden] (gate rows, then up rows); paired: [2 * padded, hidden], rows paired as above,
// with padded = pairedIntermediate(intermediate, tileColumns) and the rows of the padding zero.
inline void pairGateUpRowsPadded(const __half* gateUp, __half* paired, int intermediate, int padded, int hidden,
                                 int tileColumns, cudaStream_t stream) {
  if (padded != pairedIntermediate(intermediate, tileColumns))
    throw Error("pairGateUpRowsPadded: " + std::to_string(padded) + " is not the intermediate size " +
                std::to_string(intermediate) + " padded for " + std::to_string(tileColumns) + "-column tiles");
  const int half = tileColumns / 2;
  const std::size_t rowBytes = std::size_t(hidden) * sizeof(__half);
  const std::size_t groupBytes = std::size_t(half) * rowBytes;  // `half` rows of K elements
  const std::size_t groups = std::size_t(intermediate / half);  // groups of `half` real rows
  const std::size_t rest = std::size_t(intermediate % half);    // real rows of the last, padded group
  // The padding's rows are zero: a partial last group, and whole groups past it where the padding is a multiple of
  // 8 larger than of `half`.
  if (padded != intermediate)
    CUSYNC_CUDA_CHECK(cudaMemsetAsync(paired, 0, 2 * std::size_t(padded) * rowBytes, stream));
  // Gate groups to the first half of each pair, up groups to the second: two strided 2-D copies, then each
  // projection's last rows into the first rows of its half of the last pair.
  for (int which = 0; which < 2; ++which) {
    const char* source = reinterpret_cast<const char*>(gateUp) + std::size_t(which) * intermediate * rowBytes;
    char* destination = reinterpret_cast<char*>(paired) + which * groupBytes;
    if (groups != 0)
      CUSYNC_CUDA_CHECK(cudaMemcpy2DAsync(destination, 2 * groupBytes, source, groupBytes, groupBytes, groups,
                                          cudaMemcpyDeviceToDevice, stream));
    if (rest != 0)
      CUSYNC_CUDA_CHECK(cudaMemcpyAsync(destination + groups * 2 * groupBytes, source + groups * groupBytes,
                                        rest * rowBytes, cudaMemcpyDeviceToDevice, stream));
  }
}

// The unpadded layout: the intermediate size must be a multiple of half the tile's columns.
inline void pairGateUpRows(const __half* gateUp, __half* paired, int intermediate, int hidden, int tileColumns,
                           cudaStream_t stream) {
  const int half = tileColumns / 2;
  if (tileColumns % 2 != 0 || half <= 0 || intermediate % half != 0)
    throw Error("pairGateUpRows: the intermediate size " + std::to_string(intermediate) +
                " is not a multiple of half the tile's columns (" + std::to_string(half) + ")");
  pairGateUpRowsPadded(gateUp, paired, intermediate, intermediate, hidden, tileColumns, stream);
}

// W2 [hidden, intermediate] (a Linear layer's [N, K]) into [hidden, padded] with the added K columns zero.
inline void padWeightColumns(const __half* w2, __half* padded, int hidden, int intermediate, int paddedIntermediate,
                             cudaStream_t stream) {
  if (paddedIntermediate < intermediate)
    throw Error("padWeightColumns: cannot pad " + std::to_string(intermediate) + " columns to " +
                std::to_string(paddedIntermediate));
  const std::size_t from = std::size_t(intermediate) * sizeof(__half);
  const std::size_t to = std::size_t(paddedIntermediate) * sizeof(__half);
  if (to != from) CUSYNC_CUDA_CHECK(cudaMemsetAsync(padded, 0, to * hidden, stream));
  CUSYNC_CUDA_CHECK(cudaMemcpy2DAsync(padded, to, w2, from, from, hidden, cudaMemcpyDeviceToDevice, stream));
}

}  // namespace cusync::examples
