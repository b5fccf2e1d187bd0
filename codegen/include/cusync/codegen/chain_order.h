// Chain orders: a producer order that follows its consumer's order, for chains of three or more kernels.
//
// The grouped order (tile_order.h) produces the tiles of each semaphore together, semaphores in increasing order,
// which is the order a row-major consumer needs them in. When the consumer itself runs in another order (because
// it is the producer of the next dependency in the chain, e.g. attention's dot-product kernel in column-major order
// for the column reduction after it), the producer should produce the semaphores in the consumer's order instead.
// That is possible in closed form when the semaphores of the policy are the consumer's tiles:
//   - the semaphore tuple (sem_x, sem_y, sem_z) ranges over exactly the consumer's grid (same extents), and
//   - the consumer tile with coordinates sem(p) waits on p's semaphore;
// then   index(p) = consumerOrder(sem(p), consumerGrid) * value + rankInSemaphore(p)   with uniform value.
// Applied from the last stage backwards, each stage follows the order of the stage after it. Both conditions are
// checked with isl; the order is then proven a bijection like every other. Host-only header.
#pragma once

#include <cusync/codegen/policy_candidate.h>
#include <cusync/codegen/policy_functions.h>
#include <cusync/codegen/policy_prover.h>
#include <cusync/codegen/tile_order.h>

#include <optional>
#include <string>

namespace cusync::codegen {

// The chain order of `policy`'s producer following `consumerOrder` (an order of the policy's consumer grid), or
// nullopt with the reason in `whyNot`. The caller has checked that the policy's value is uniform.
std::optional<TileOrderCandidate> chainOrder(const ProofModels& models, const PolicyCandidate& policy,
                                             const PolicyFunctions& functions,
                                             const TileOrderCandidate& consumerOrder, std::string& whyNot);

}  // namespace cusync::codegen
