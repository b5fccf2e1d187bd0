// A `#pragma tile` with no statement after it annotates nothing: a warning, and the file is left unchanged.
// REWRITER-EXPECT: unchanged
// REWRITER-DIAG: empty_pragma.cu:14:1: warning: #pragma tile is not followed by a statement in its block
// REWRITER-DIAG: empty_pragma.cu:18:1: warning: #pragma tile must precede a statement inside a function body
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

// Outside a function body a `#pragma tile` annotates nothing either.
#pragma tile
__device__ int notAStatement;
