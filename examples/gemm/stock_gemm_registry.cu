#include "stock_gemm_registry.h"

namespace cusync::examples {
std::vector<StockGemmEntry>& stockGemmRegistry() {
  static std::vector<StockGemmEntry> registry;
  return registry;
}
}  // namespace cusync::examples
