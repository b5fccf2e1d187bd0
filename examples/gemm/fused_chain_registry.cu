#include "fused_chain_registry.h"

namespace cusync::examples {
std::vector<FusedChainEntry>& fusedChainRegistry() {
  static std::vector<FusedChainEntry> registry;
  return registry;
}
}  // namespace cusync::examples
