// Tile orders: in which order a stage's blocks take its tiles (paper section IV-A, "Generate Tile Processing
// Order").
//
// Every grid gets RowMajor (x fastest), the consumer order. A producer additionally gets, per proven policy whose
// semaphores all have the same value N, the grouped order
//     index(p) = sem(p) * N + rankInSemaphore(p)
// which produces the N tiles of one semaphore consecutively and the semaphores in increasing order — the paper's
// prodOrder, generalized from rows to any grouping (for StridedSync on the QKV split, the Q, K and V tiles one
// dot-product tile reads come one after another). Along a chain of kernels each intermediate stage takes the
// grouped order of the dependency it produces for, so every stage produces what the next one waits on first.
// An order equal to an earlier one on every tile (checked with isl) is not emitted twice. Host-only header.
#pragma once

#include <cusync/codegen/index_expression.h>
#include <cusync/codegen/policy_candidate.h>
#include <cusync/codegen/policy_functions.h>

#include <string>
#include <vector>

namespace cusync::codegen {

struct TileOrderCandidate {
  std::string grid;
  std::string name;          // "RowMajor", or "GroupedBy_<policy>_<dependency>"
  IndexExpression index;
  std::string policyStruct;  // grouped orders: the policy struct whose semaphores the order groups
  std::string description;
  // Chain orders (chain_order.h): the consumer order followed, and the semaphore tuple that names the consumer tile.
  std::string consumerOrderStruct;
  std::vector<IndexExpression> semaphoreCoordinates;
  std::vector<IndexExpression> semaphoreExtents;
  std::string structName() const { return "Order_" + grid + "_" + name; }
};

TileOrderCandidate rowMajorOrder(const std::string& grid, int rank);

// The grouped order of a policy whose value is the same for all tiles (the caller checks that with isUniform).
TileOrderCandidate groupedOrder(const PolicyCandidate& policy, const PolicyFunctions& functions);

}  // namespace cusync::codegen
