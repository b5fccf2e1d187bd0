#include "fused_chain_registry.h"

namespace cusync::examples {
template <class Policy>
std::vector<FusedChainEntryFor<Policy>>& fusedChainRegistry() {
  static std::vector<FusedChainEntryFor<Policy>> registry;
  return registry;
}
template std::vector<FusedChainEntryFor<FusedMlpPolicy>>& fusedChainRegistry<FusedMlpPolicy>();
template std::vector<FusedChainEntryFor<SwiGluMlpPolicy>>& fusedChainRegistry<SwiGluMlpPolicy>();
}  // namespace cusync::examples
