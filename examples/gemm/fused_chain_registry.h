// Type-erased access to the fused-chain GEMM instantiations (fused_chain_gemm_kernel.hpp): two dependent GEMMs in
// one persistent launch, D0 = act(A0 * B0^T), D1 = D0 * B1^T, act = GELU (GPT-3) or the paired SwiGLU (LLaMA:
// B0's rows paired per tile, D0 = silu(gate) * up with half of GEMM 0's columns). Each instantiation lives in its
// own translation unit and registers itself in the registry of its chain's policy, so host programs neither include
// CUTLASS nor recompile kernels. Host header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cusync/chain_queue.cuh"
#include "cusync/chain_trace.h"
#include "cusync/cutlass/load_order.hpp"
#include "gemm_registry.h"
#include "gpt3_mlp_fused.h"   // generated and proven by cusyncgen from examples/mlp/gpt3_mlp_fused.dep
#include "llama_mlp_fused.h"  // ... and from examples/mlp/llama_mlp_fused.dep

namespace cusync::examples {
// GEMM 1 posts and GEMM 2 waits under the policy cusyncgen proved for the fused chain's k-split dependency
// (one semaphore per GEMM-1 tile; RowSync would make a GEMM-2 unit of one k-range wait for the whole row).
using FusedMlpPolicy = cusync::generated::gpt3_mlp_fused::Dep_dep_g1_TileSync;
// The LLaMA chain's: one semaphore per S tile (= per paired gate/up tile of GEMM 1).
using SwiGluMlpPolicy = cusync::generated::llama_mlp_fused::Dep_dep_g1_TileSync;
}  // namespace cusync::examples

namespace cusync::examples {

// One launch of the chain. GEMM 0: [m, k0] x [k0, n0] -> d0 (GELU: [m, n0]; paired SwiGLU: [m, n0 / 2]);
// GEMM 1: d0 x [n0 (/ 2), n1] -> d1. Weights are stored N x K (a Linear layer's weight). `Policy` names the chain:
// GEMM 0 posts and GEMM 1 waits under it.
template <class Policy>
struct FusedChainLaunchArgsFor {
  int m = 0, k0 = 0, n0 = 0, n1 = 0;
  const __half* a0 = nullptr;
  const __half* b0 = nullptr;
  __half* d0 = nullptr;
  const __half* b1 = nullptr;
  __half* d1 = nullptr;
  StageView stages[2];       // GEMM 0 (posts to its semaphores when synchronized), GEMM 1
  ChainQueueView queue;      // the units this launch draws (FusedChain::queue())
  // GEMM 1's view of GEMM 0's output (Stage::inputFor, which checks the pairing); null semaphores: no waits
  // (stream order between two launches).
  InputView<Policy> gemm0Output;
  LoadOrder loadOrder = LoadOrder::WeightsFirst;
  // Split-K buffers per GEMM (stages[s].blocksPerTile > 1): partials (tiles * parts * tileM * tileN floats) and
  // one zeroed arrival counter per tile.
  float* splitPartials[2] = {nullptr, nullptr};
  std::uint32_t* splitArrivals[2] = {nullptr, nullptr};
  ChainUnitTrace* trace = nullptr;  // queue.ticketsPerLaunch() records, or null (chain_trace.h)
  bool waitForWholeUnit = false;    // GEMM 1's units wait for their whole k-range, not k-block by k-block
};

template <class Policy>
struct FusedChainEntryFor {
  using LaunchArgs = FusedChainLaunchArgsFor<Policy>;
  std::string name;  // e.g. fused_64x128x128_s4_ws
  GemmTileShape tile;
  int stages;
  bool cooperative;
  GridShape (*tileGrid)(int m, int n);
  int (*maxActiveBlocksPerSm)();
  // Empty when the launch is valid, else why not (the kernel's own checks).
  std::string (*whyNotImplementable)(const LaunchArgs& args);
  void (*launch)(const LaunchArgs& args, cudaStream_t stream);
  // Blocks per cluster along M (1: none; 2: the pair shares B through TMA multicast, the queue is drawn per
  // cluster) and, for clusters, how many clusters can be resident at once (cudaOccupancyMaxActiveClusters).
  int clusterRows = 1;
  int (*maxActiveClusters)() = nullptr;
  // GEMM 1's tile and tile grid (GEMM 0's are `tile` and `tileGrid`): the same shape unless the configuration gives
  // GEMM 1 its own tile width (names ending in _n<width>).
  GemmTileShape secondTile;
  GridShape (*secondTileGrid)(int m, int n) = nullptr;
};

// The GPT-3 (GELU) chain's and the LLaMA (paired SwiGLU) chain's.
using FusedChainLaunchArgs = FusedChainLaunchArgsFor<FusedMlpPolicy>;
using FusedChainEntry = FusedChainEntryFor<FusedMlpPolicy>;
using SwiGluChainLaunchArgs = FusedChainLaunchArgsFor<SwiGluMlpPolicy>;
using SwiGluChainEntry = FusedChainEntryFor<SwiGluMlpPolicy>;

// The instances of the chain of `Policy` (FusedMlpPolicy: GPT-3, SwiGluMlpPolicy: LLaMA).
template <class Policy = FusedMlpPolicy>
std::vector<FusedChainEntryFor<Policy>>& fusedChainRegistry();

template <class Policy>
struct FusedChainRegistration {
  explicit FusedChainRegistration(FusedChainEntryFor<Policy> entry) {
    fusedChainRegistry<Policy>().push_back(std::move(entry));
  }
};

}  // namespace cusync::examples
