#include <cusync/codegen/chain_order.h>

#include <isl/map.h>

namespace cusync::codegen {
namespace {

// Whether the semaphores of `policy` are the tiles of its consumer, checked on one model (throws NotAffine).
bool semaphoresAreConsumerTiles(const analysis::IslModel& model, const PolicyCandidate& policy,
                                const PolicyFunctions& functions, std::string& whyNot) {
  const analysis::GridModel& consumer = model.grid(policy.consumerGrid);
  IslGridContext producer = gridContext(model, policy.producerGrid);
  isl::set domain = producer.domain;
  int consumerRank = static_cast<int>(consumer.grid.dimensions.size());
  for (int d = 0; d < 3; ++d) {
    isl::pw_aff semaphores = toIsl(functions.semaphoreExtents[d], producer).intersect_domain(domain);
    isl::pw_aff expected = d < consumerRank ? onGridDomain(consumer.extents[d], producer.domainSpace)
                                            : toIsl(constant(1), producer);
    if (!semaphores.as_map().is_equal(expected.intersect_domain(domain).as_map())) {
      whyNot = "the semaphores of " + policy.structName() + " do not have the shape of the " + policy.consumerGrid +
               " grid";
      return false;
    }
  }
  // { p -> C[sem(p)] } must lie in { p -> c : c reads a tile sharing p's semaphore }.
  isl_map* toConsumer = isl_map_from_pw_aff(toIsl(functions.semaphoreCoordinates[0], producer).intersect_domain(domain).release());
  for (int d = 1; d < consumerRank; ++d)
    toConsumer = isl_map_flat_range_product(
        toConsumer, isl_map_from_pw_aff(toIsl(functions.semaphoreCoordinates[d], producer).intersect_domain(domain).release()));
  toConsumer = isl_map_set_tuple_name(toConsumer, isl_dim_out, policy.consumerGrid.c_str());
  isl::map semaphoreToConsumer = isl::manage(toConsumer);
  isl::map semaphore = toIsl(functions.semaphore, producer).intersect_domain(domain).as_map();
  isl::map sameSemaphore = semaphore.apply_range(semaphore.reverse());
  isl::map relation = model.dependency(policy.dependency).producers[policy.producerIndex].relation;
  isl::map waitingConsumers = sameSemaphore.apply_range(relation.reverse());
  if (!semaphoreToConsumer.is_subset(waitingConsumers)) {
    whyNot = "the " + policy.consumerGrid + " tile at a semaphore's coordinates does not wait on it";
    return false;
  }
  return true;
}

}  // namespace

std::optional<TileOrderCandidate> chainOrder(const ProofModels& models, const PolicyCandidate& policy,
                                             const PolicyFunctions& functions,
                                             const TileOrderCandidate& consumerOrder, std::string& whyNot) {
  bool applies = false;
  try {
    applies = semaphoresAreConsumerTiles(models.symbolic, policy, functions, whyNot);
  } catch (const NotAffine&) {
    try {
      applies = semaphoresAreConsumerTiles(models.concrete, policy, functions, whyNot);
    } catch (const NotAffine& notAffine) {
      whyNot = notAffine.what();
    }
  } catch (const isl::exception& error) {
    whyNot = error.what();
  }
  if (!applies) return std::nullopt;
  TileOrderCandidate order;
  order.grid = policy.producerGrid;
  order.name = "Chain_" + policy.policy + "_" + policy.dependency + "_" + consumerOrder.name;
  order.index = substitute(consumerOrder.index, functions.semaphoreCoordinates, functions.semaphoreExtents) *
                    functions.value +
                functions.rankInSemaphore;
  order.policyStruct = policy.structName();
  order.consumerOrderStruct = consumerOrder.structName();
  order.semaphoreCoordinates.assign(functions.semaphoreCoordinates, functions.semaphoreCoordinates + 3);
  order.semaphoreExtents.assign(functions.semaphoreExtents, functions.semaphoreExtents + 3);
  order.description = "the tiles of each " + policy.structName() + " semaphore consecutively, semaphores in the " +
                      "order " + consumerOrder.structName() + " processes the " + policy.consumerGrid +
                      " tiles waiting on them (a chain order)";
  return order;
}

}  // namespace cusync::codegen
