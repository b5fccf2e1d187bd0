// Type-erased access to the hooked CUTLASS GEMM instantiations, so that host programs (examples, benchmarks,
// tests) neither include CUTLASS nor recompile kernels. Each instantiation lives in its own translation unit
// under instances/ and registers itself here at static-initialization time. Host header (needs cuda_fp16.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cusync/block_trace.h"
#include "cusync/cutlass/load_order.hpp"
#include "cusync/launch.cuh"
#include "cusync/stage_view.cuh"

namespace cusync::examples {

enum class Activation { Identity, Gelu };

enum class PolicyKind { TileSync, RowSync };
inline const char* policyName(PolicyKind p) { return p == PolicyKind::TileSync ? "TileSync" : "RowSync"; }

using cutlass_sm90::LoadOrder;

struct GemmTileShape {
  int m, n, k;
};

// D[M,N] = act(A[M,K] * B[K,N]); A row-major, B stored N x K (K contiguous, a Linear layer's weight), D row-major.
struct GemmLaunchArgs {
  int m = 0, n = 0, k = 0;
  const __half* a = nullptr;
  const __half* b = nullptr;
  __half* d = nullptr;
  StageView stage;                                // this GEMM's stage (tile counter, order, output semaphores)
  const std::uint32_t* producerSemaphores = nullptr;  // A's producer stage; null = A is not synchronized
  GridShape producerGrid;
  std::uint32_t producerTileRows = 0, producerTileColumns = 0;
  LoadOrder loadOrder = LoadOrder::WaitThenLoad;
  bool triggerDependentsAtStart = false;  // this GEMM is a PDL producer
  bool waitForPriorGrid = false;          // PDL-only baseline: griddepcontrol.wait before A
  LaunchOrdering launchOrdering = LaunchOrdering::StreamOrder;  // Programmatic: this GEMM is a PDL consumer
  // Split-K: stage.blocksPerTile blocks per tile; then fp32 partials (tiles * blocksPerTile * tileM * tileN) and
  // one zeroed arrival counter per tile.
  float* splitPartials = nullptr;
  std::uint32_t* splitArrivals = nullptr;
  bool splitAccumulate = false;  // parts add into one slot in L2 (split_k_reduction.hpp's SplitKBuffers::accumulate)
  // Diagnostics (block_trace.h), kernels that record it only (the hooked GEMV stage and the one-tile-per-block
  // CUTLASS GEMM, and the persistent ones): a record per block at trace[blockIdx.x], stage index traceStage.
  BlockTrace* trace = nullptr;
  std::uint32_t traceStage = 0;
};

struct GemmKernelEntry {
  std::string name;
  GemmTileShape tile;
  int stages;
  bool cooperative;       // two math warp groups (else one)
  int minBlocksPerSm;
  Activation activation;
  PolicyKind inputPolicy;   // policy A is waited on with
  PolicyKind outputPolicy;  // policy D is posted with
  GridShape (*tileGrid)(int m, int n);
  std::uint32_t (*semaphoreCount)(GridShape grid);  // of the output policy
  int (*maxActiveBlocksPerSm)();
  void (*launch)(const GemmLaunchArgs& args, cudaStream_t stream);
  bool loadsReorderedByRewriter = false;  // built from the mainloop cusync-tile-rewriter reordered ("+Rw")
  // Persistent: launches stage.persistentBlocks blocks (Stage::setPersistentBlocks), each taking tiles until none
  // is left; otherwise one block per work unit.
  bool persistent = false;
  // Pingpong: the persistent kernel whose two math warp groups take alternate tiles, one's epilogue under the other's
  // MMA (tile_sync_pingpong_gemm_kernel.hpp); `cooperative` is false, `persistent` true.
  bool pingpong = false;
  // 2 for a one-tile-per-block kernel launched in 2x1 clusters, whose two blocks share each k-block of B by TMA
  // multicast: unsplit, and its stage's order must pair the tiles (Stage::setClusterTileOrder).
  int clusterRows = 1;
};

std::vector<GemmKernelEntry>& gemmRegistry();

// Registers an entry at static-initialization time.
struct GemmRegistration {
  explicit GemmRegistration(GemmKernelEntry entry) { gemmRegistry().push_back(std::move(entry)); }
};

}  // namespace cusync::examples
