// The variants the MLP examples run side by side with the same hooked GEMMs, and the tile configurations (sets of
// registered GEMM instances of one tile shape) they run them with. Host header.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "cusync/stage.cuh"
#include "gemm_registry.h"
#include "mlp_options.h"

namespace cusync::examples {

// How consecutive stages are ordered: by the stream (no semaphores), by the wait-kernel or by programmatic dependent
// launch (both with cusync's per-tile semaphores), or by PDL alone (griddepcontrol.wait: the whole previous grid).
enum class Ordering { StreamSync, WaitKernel, Pdl, PdlGridSync };
inline const char* orderingName(Ordering o) {
  switch (o) {
    case Ordering::StreamSync: return "StreamSync";
    case Ordering::WaitKernel: return "WaitKernel";
    case Ordering::Pdl: return "PDL";
    case Ordering::PdlGridSync: return "PDL-GridSync";
  }
  return "?";
}

struct VariantSpec {
  Ordering ordering;
  PolicyKind policy;  // meaningful for WaitKernel and Pdl
  LoadOrder loadOrder;
  bool synchronized() const { return ordering == Ordering::WaitKernel || ordering == Ordering::Pdl; }
  bool programmatic() const { return ordering == Ordering::Pdl || ordering == Ordering::PdlGridSync; }
  // How the chain executor (cusync/chain_executor.cuh) orders the stages: PDL grid sync is launched as PDL is, but its
  // consumers wait for the whole previous grid (griddepcontrol.wait) instead of tile by tile.
  StageOrdering stageOrdering() const {
    switch (ordering) {
      case Ordering::StreamSync: return StageOrdering::StreamOrder;
      case Ordering::WaitKernel: return StageOrdering::WaitKernel;
      case Ordering::Pdl:
      case Ordering::PdlGridSync: return StageOrdering::ProgrammaticLaunch;
    }
    return StageOrdering::StreamOrder;
  }
  std::string name() const {
    std::string n = orderingName(ordering);
    if (ordering == Ordering::WaitKernel || ordering == Ordering::Pdl) n = std::string(policyName(policy)) + "+" + n;
    if (loadOrder == LoadOrder::WeightsFirst) n += "+R";
    return n;
  }
};

inline std::vector<VariantSpec> allVariants() {
  std::vector<VariantSpec> variants{{Ordering::StreamSync, PolicyKind::TileSync, LoadOrder::WaitThenLoad},
                                    {Ordering::PdlGridSync, PolicyKind::TileSync, LoadOrder::WeightsFirst}};
  for (PolicyKind p : {PolicyKind::TileSync, PolicyKind::RowSync})
    for (Ordering o : {Ordering::WaitKernel, Ordering::Pdl})
      for (LoadOrder r : {LoadOrder::WaitThenLoad, LoadOrder::WeightsFirst})
        variants.push_back({o, p, r});
  return variants;
}

// Whether --variants selects `variant` (all when the list is empty).
inline bool variantSelected(const MlpOptions& options, const VariantSpec& variant) {
  return options.variants.empty() ||
         std::find(options.variants.begin(), options.variants.end(), variant.name()) != options.variants.end();
}

// A tile configuration: the registered kernels of one tile shape, for both policies.
struct TileConfig {
  std::string name;  // e.g. 128x128x64_s4_coop_b1
  std::map<PolicyKind, const GemmKernelEntry*> producer;  // GELU, posts under the policy
  std::map<PolicyKind, const GemmKernelEntry*> consumer;  // identity, waits under the policy (posts TileSync)
  bool loadsReorderedByRewriter = false;  // "+Rw": B issued before the wait for A by cusync-tile-rewriter
};

inline std::string configName(const GemmKernelEntry& e) {
  return std::to_string(e.tile.m) + "x" + std::to_string(e.tile.n) + "x" + std::to_string(e.tile.k) + "_s" +
         std::to_string(e.stages) + (e.cooperative ? "_coop" : "_ws") + "_b" + std::to_string(e.minBlocksPerSm) +
         (e.persistent ? "_p" : "") + (e.pingpong ? "_pp" : "") +
         (e.clusterRows > 1 ? "_c" + std::to_string(e.clusterRows) + "x1" : "") +
         (e.loadsReorderedByRewriter ? "_Rw" : "");
}

// The registered configurations that --configs selects and that have every kernel the example needs: the
// consumer (identity) GEMMs under both policies, and the producer (GELU) GEMMs too when `needsProducer`.
inline std::vector<TileConfig> collectConfigs(const MlpOptions& options, bool needsProducer) {
  std::map<std::string, TileConfig> byName;
  for (const auto& entry : gemmRegistry()) {
    TileConfig& config = byName[configName(entry)];
    config.name = configName(entry);
    config.loadsReorderedByRewriter = entry.loadsReorderedByRewriter;
    if (entry.activation == Activation::Gelu) config.producer[entry.outputPolicy] = &entry;
    else config.consumer[entry.inputPolicy] = &entry;
  }
  std::vector<TileConfig> configs;
  for (auto& [name, config] : byName) {
    if (configSelected(options, name) && (!needsProducer || config.producer.size() == 2) && config.consumer.size() == 2)
      configs.push_back(config);
  }
  return configs;
}

}  // namespace cusync::examples
