// A file that does not parse: Clang's error, the rewriter's own error, exit status 1 and no output.
// REWRITER-EXIT: 1
// REWRITER-DIAG: parse_failure.cu:10:32: error: use of undeclared identifier 'Bs'
// REWRITER-DIAG: cusync-tile-rewriter: error: 'parse_failure.cu' could not be parsed; nothing was written
#include "tile_support.cuh"

__global__ void consumer(const float* B, int k) {
  __shared__ float As[kTileK];
#pragma tile
  loadTile(As, B, k, kTileK) + Bs;
}
