// The SwiGLU stage of the LLaMA MLP, between its two GEMMs: S = silu(gate) * up, where GEMM 1 wrote
// [gate | up] = X * [W1 | V]^T as one [M, 2F] matrix (gate: columns [0, F), up: columns [F, 2F); F = F/8 per GPU).
//
// One block per TileRows x TileColumns tile of S. The block takes its tile from the stage's ticket counter (so tiles
// follow the stage's order and the ticket's iteration numbers its launch), waits for every GEMM-1 tile that
// overlaps its gate columns and its up columns, computes in fp32, stores fp16 with 16-byte accesses, and posts its
// tile under the stage's output policy. GEMM 1's tiles need not align with S's: the producer tiles are computed from
// GEMM 1's tile shape at run time (as the GEMM mainloop does for its A operand), so a gate or up range may straddle
// two GEMM-1 tiles (e.g. 128-wide S and GEMM-1 tiles: the up columns start at F = 2752, not a multiple of 128).
// Device code and its host launcher; include from a .cu file.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cusync/block_sync.cuh"
#include "cusync/error.h"
#include "cusync/fast_silu.cuh"
#include "cusync/launch.cuh"
#include "cusync/stage_view.cuh"
#include "cusync/tile.h"
#include "swiglu_geometry.h"

namespace cusync::examples {

template <class InputPolicy>
struct SwiGluStageArgs {
  StageView stage;                     // gs: tile counter and order; semaphores null = nobody waits on S
  InputView<InputPolicy> gateUpInput;  // GEMM 1's semaphores; null = stream-ordered, no waiting
  SwiGluGeometry geometry;
  const __half* gateUp = nullptr;  // [m, 2 * intermediate], row-major
  __half* s = nullptr;             // [m, intermediate], row-major
  bool triggerDependentsAtStart = false;  // PDL: the next kernel may launch once every block has started
  bool waitForPriorGrid = false;          // PDL-only baseline: griddepcontrol.wait (all of GEMM 1) before reading
};

inline constexpr int kSwiGluThreads = 256;
inline constexpr int kSwiGluVector = 8;  // halves per 16-byte access

template <class InputPolicy, class OutputPolicy>
__global__ void __launch_bounds__(kSwiGluThreads) swiGluStage(const SwiGluStageArgs<InputPolicy> args) {
  if (args.triggerDependentsAtStart) triggerDependentLaunch();
  const TileTicket ticket = blockAcquireTile(args.stage);
  const SwiGluGeometry& g = args.geometry;
  if (args.waitForPriorGrid) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  }
  // Thread 0 waits for every GEMM-1 tile the block reads (acquire), the barrier extends it to the block.
  if (args.gateUpInput.synchronized()) {
    if (threadIdx.x == 0)
      g.forEachProducerTile(ticket.tile, [&](TileCoord producerTile) {
        args.gateUpInput.waitThread(producerTile, ticket.iteration, args.stage, ticket.tile);
      });
    __syncthreads();
  }

  const IndexRange rows = g.rows(ticket.tile);
  const IndexRange columns = g.columns(ticket.tile);
  const std::uint32_t vectorsPerRow = (columns.end - columns.first) / kSwiGluVector;
  const std::uint32_t vectors = (rows.end - rows.first) * vectorsPerRow;
  const std::size_t gateUpStride = 2 * std::size_t(g.intermediate);
  for (std::uint32_t v = threadIdx.x; v < vectors; v += kSwiGluThreads) {
    const std::size_t row = rows.first + v / vectorsPerRow;
    const std::size_t column = columns.first + (v % vectorsPerRow) * kSwiGluVector;
    // ld.global.cg: through L2 only. GEMM 1 wrote these while this kernel may already have been running, so no
    // stale line may come from L1 or the non-coherent read-only path.
    const uint4 gateBits = __ldcg(reinterpret_cast<const uint4*>(args.gateUp + row * gateUpStride + column));
    const uint4 upBits =
        __ldcg(reinterpret_cast<const uint4*>(args.gateUp + row * gateUpStride + g.intermediate + column));
    const __half2* gate = reinterpret_cast<const __half2*>(&gateBits);
    const __half2* up = reinterpret_cast<const __half2*>(&upBits);
    uint4 outBits;
    __half2* out = reinterpret_cast<__half2*>(&outBits);
#pragma unroll
    for (int i = 0; i < kSwiGluVector / 2; ++i) {
      const float2 gf = __half22float2(gate[i]);
      const float2 uf = __half22float2(up[i]);
      out[i] = __floats2half2_rn(fastSilu(gf.x) * uf.x, fastSilu(gf.y) * uf.y);
    }
    *reinterpret_cast<uint4*>(args.s + row * g.intermediate + column) = outBits;
  }
  // GEMM 2 reads S through TMA (the async proxy); it fences after its acquire, and this orders each thread's
  // generic stores for the async proxy on the writing side too, as the GEMM epilogue does before it posts.
  fenceProxyAsyncGlobal();
  blockPost<OutputPolicy>(args.stage, ticket.tile);  // barrier: every thread's stores before thread 0's release
}

// Checks what the kernel assumes (16-byte accesses, the stage's grid) and launches one block per tile of S.
template <class InputPolicy, class OutputPolicy>
void launchSwiGluStage(const SwiGluStageArgs<InputPolicy>& args, cudaStream_t stream, LaunchOrdering ordering) {
  const SwiGluGeometry& g = args.geometry;
  if (g.intermediate % kSwiGluVector != 0 || g.tileColumns % kSwiGluVector != 0 || g.tileRows == 0 ||
      g.producerTileRows == 0 || g.producerTileColumns == 0)
    throw Error("SwiGLU stage: F/8 and the tile width must be multiples of 8, every tile side non-zero");
  if (reinterpret_cast<std::uintptr_t>(args.gateUp) % 16 != 0 || reinterpret_cast<std::uintptr_t>(args.s) % 16 != 0)
    throw Error("SwiGLU stage: [gate | up] and S must be 16-byte aligned");
  if (!(args.stage.grid == g.grid()) || args.stage.blocksPerTile != 1)
    throw Error("SwiGLU stage: the stage's grid is not S's tile grid, or it has several blocks per tile");
  launchKernel(swiGluStage<InputPolicy, OutputPolicy>, dim3(g.grid().tileCount()), dim3(kSwiGluThreads), 0, stream,
               ordering, args);
}

template <class InputPolicy, class OutputPolicy>
int swiGluMaxActiveBlocksPerSm() {
  int blocks = 0;
  CUSYNC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, swiGluStage<InputPolicy, OutputPolicy>,
                                                                  kSwiGluThreads, 0));
  return blocks;
}

}  // namespace cusync::examples
