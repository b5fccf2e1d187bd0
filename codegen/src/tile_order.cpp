#include <cusync/codegen/tile_order.h>

namespace cusync::codegen {

TileOrderCandidate rowMajorOrder(const std::string& grid, int rank) {
  // Horner's scheme from the outermost dimension: x + X * (y + Y * z).
  IndexExpression index = constant(0);
  for (int d = rank - 1; d >= 0; --d) index = coordinate(d) + extent(d) * index;
  return {grid, "RowMajor", index, "", "row-major: x fastest, then y, then z (the consumer order)"};
}

TileOrderCandidate groupedOrder(const PolicyCandidate& policy, const PolicyFunctions& functions) {
  TileOrderCandidate order;
  order.grid = policy.producerGrid;
  order.name = "GroupedBy_" + policy.policy + "_" + policy.dependency;
  order.index = functions.semaphore * functions.value + functions.rankInSemaphore;
  order.policyStruct = policy.structName();
  order.description = "the tiles of each " + policy.structName() +
                      " semaphore consecutively, semaphores in increasing order (what one " + policy.consumerGrid +
                      " tile waits for is produced together)";
  return order;
}

}  // namespace cusync::codegen
