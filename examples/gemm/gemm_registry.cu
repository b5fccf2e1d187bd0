#include "gemm_registry.h"

namespace cusync::examples {
std::vector<GemmKernelEntry>& gemmRegistry() {
  static std::vector<GemmKernelEntry> registry;
  return registry;
}
}  // namespace cusync::examples
