// The hooked CUTLASS sm90 GEMMs of the attention chain, type-erased so that the example and the tests neither
// include CUTLASS nor recompile kernels: per model, phase and tile configuration, the QKV GEMM (posts under the
// StridedSync policy of examples/attention/attention_{decode,prompt}.dep) and the output GEMM (waits for T under
// TileSync or RowSync). Each instantiation lives in its own translation unit (attention_gemm_instance.cuh, generated
// by examples/attention/CMakeLists.txt from its lists of configurations per role) and registers itself here. Host
// header.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "attention_policies.h"
#include "gemm_registry.h"

namespace cusync::examples::attention {

enum class GemmRole { Qkv, Output };

struct AttentionGemm {
  std::string name;           // model, phase, role, T policy and configuration
  std::string configuration;  // the tile configuration alone, e.g. 128x192x64_s4_coop_b1 (what --gemm-configs names)
  int rank;                   // place in its role's CMake list: the first is the baseline
  Model model;
  Phase phase;
  GemmRole role;
  TPolicyKind tPolicy;  // the output GEMM's input policy (the QKV GEMM's entry says TileSync and ignores it)
  GemmTileShape tile;
  bool persistent;
  GridShape (*tileGrid)(int m, int n);
  int (*maxActiveBlocksPerSm)();
  void (*launch)(const GemmLaunchArgs& args, cudaStream_t stream);
  // Blocks per cluster along M (hooked_gemm.cuh's ClusterRows): 2 needs the stage's order in clusters of 2 rows
  // (Stage::setClusterTileOrder) and runs unsplit.
  int clusterRows = 1;
  // Two math warp groups on alternate tiles (tile_sync_pingpong_gemm_kernel.hpp): persistent, unsplit.
  bool pingpong = false;
  // The lean persistent kernel (tile_sync_persistent_gemm_kernel.hpp): static units only, no stream-K, no split-K
  // summed in L2.
  bool lean = false;
  // Blocks per tile along N of a whole-rows GEMV stage (hooked_rows_mma_gemv_kernel.cuh: TileN / 8), each over the
  // whole of K; 1 for every other GEMM. Its stage runs that many parts per tile (SplitChoice::columnGroups), a tile's
  // parts back to back, and is never split along K.
  std::uint32_t columnGroups = 1;
  // The packed GEMV stage (hooked_packed_gemv_kernel.cuh): its launch reads B packed once in mma fragment order at 16
  // rows (AttentionBuffers::wqkvPacked / woPacked), not B.
  bool packedWeights = false;
};

std::vector<AttentionGemm>& attentionGemms();

// The blocks a persistent GEMM's stage launches (Stage::setPersistentBlocks): one per block slot of the device, at
// most one per work unit; 0 for a GEMM with one block per work unit.
inline std::uint32_t persistentBlocksFor(const AttentionGemm& gemm, std::uint32_t workUnits, int multiprocessors) {
  if (!gemm.persistent) return 0;
  return std::min(std::uint32_t(multiprocessors) * std::uint32_t(gemm.maxActiveBlocksPerSm()), workUnits);
}

// The registered GEMMs of a role, in their CMake list's order, restricted to the configurations named in `only`
// (all when it is empty). Empty when this build has none (a CI build compiles one configuration per role).
std::vector<const AttentionGemm*> findAttentionGemms(Model model, Phase phase, GemmRole role, TPolicyKind tPolicy,
                                                     const std::vector<std::string>& only = {});

// Whether some registered GEMM has this tile configuration.
bool isAttentionGemmConfiguration(const std::string& configuration);

struct AttentionGemmRegistration {
  explicit AttentionGemmRegistration(AttentionGemm gemm) { attentionGemms().push_back(std::move(gemm)); }
};

}  // namespace cusync::examples::attention
