// A `#pragma tile` with no statement after it annotates nothing: a warning, and the file is left unchanged.
// REWRITER-EXPECT: unchanged
// REWRITER-DIAG: empty_pragma.cu:13:1: warning: #pragma tile is not followed by a statement in its block
#include "tile_support.cuh"

__global__ void consumer(Stage stage, const float* A, float* C, int k) {
  __shared__ float As[kTileK];
#pragma tile
  {
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
  }
#pragma tile
}
