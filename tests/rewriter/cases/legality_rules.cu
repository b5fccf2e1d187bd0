// The def/use rules, one kernel each. Disjoint members of one struct are independent (moves); reading the whole
// struct after the waiting load wrote a member conflicts; a load may not write what the waiting load reads; a
// `return` in the waiting block is a barrier; a load writing through a pointer the waiting load reads is a conflict
// only for the pointed-to memory, not for the pointer's value.
// REWRITER-DIAG: legality_rules.cu:40:3: warning: #pragma tile: this load stays below the waiting load at line 34: it reads 'cursor', which that waiting load writes
// REWRITER-DIAG: legality_rules.cu:54:3: warning: #pragma tile: this load stays below the waiting load at line 49: it writes 'k', which that waiting load reads
// REWRITER-DIAG: legality_rules.cu:69:3: warning: #pragma tile: this load stays below the waiting load at line 63: that waiting load contains a 'return'
#include "tile_support.cuh"

struct Cursor {
  int row;
  int column;
};

__global__ void disjointMembers(Stage stage, const float* A, const float* B, float* C, Cursor cursor) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  {
    stage.wait(cursor.row);
    cursor.row += 1;
    loadTile(As, A, cursor.row, kTileK);
  }
#pragma tile
  loadTile(Bs, B, cursor.column, kTileK);
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}

__global__ void wholeStruct(Stage stage, const float* A, const float* B, float* C, Cursor cursor) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  {
    stage.wait(cursor.row);
    cursor.row += 1;
    loadTile(As, A, cursor.row, kTileK);
  }
#pragma tile
  loadTile(Bs, B, Cursor(cursor).column, kTileK);
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}

__global__ void writeAfterRead(Stage stage, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  {
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
  }
#pragma tile
  loadTile(Bs, B, k++, kTileK);
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x] + float(k);
}

__global__ void earlyReturn(Stage stage, const float* A, const float* B, float* C, int k, int tiles) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  {
    if (k / kTileK >= tiles) return;
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
  }
#pragma tile
  loadTile(Bs, B, k, kTileK);
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}

__global__ void pointerValueOnly(Stage stage, const float* A, const float* B, float* C, float* scratch, int k) {
  __shared__ float As[kTileK];
#pragma tile
  {
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
    C[threadIdx.x] = float(scratch != nullptr);
  }
#pragma tile
  loadTile(scratch, B, k, kTileK);
  __syncthreads();
  C[threadIdx.x] += As[threadIdx.x] * scratch[threadIdx.x];
}
