#include "conv_registry.h"

namespace cusync::examples {
std::vector<ConvKernelEntry>& convRegistry() {
  static std::vector<ConvKernelEntry> registry;
  return registry;
}
}  // namespace cusync::examples
