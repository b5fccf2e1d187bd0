#include <cusync/analysis/isl_operation_budget.h>
#include <cusync/codegen/chain_order.h>
#include <cusync/codegen/generation.h>
#include <cusync/codegen/integer_width.h>

#include <algorithm>

namespace cusync::codegen {
namespace {

// isl reports internal limits (e.g. too many pieces) as exceptions; a candidate that hits one is not proven.
template <typename Prove>
Proof guarded(Prove prove) {
  try {
    return prove();
  } catch (const isl::exception& error) {
    Proof proof;
    proof.failure = std::string("isl could not decide the proof: ") + error.what();
    return proof;
  }
}

// A proof in unbounded integers covers the emitted code only if its std::uint32_t arithmetic cannot wrap
// (integer_width.h): checked for every function the struct emits, over all admissible parameter values.
void requireEmittedWidth(const ProofModels& models, const std::string& grid,
                         const std::vector<std::pair<std::string, const IndexExpression*>>& functions, Proof& proof) {
  if (!proof.proven) return;
  for (const auto& [name, expression] : functions) {
    WidthProof width;
    try {
      const analysis::IslOperationBudget budget(models.symbolic.ctx(), analysis::kIslProofOperations);
      width = proveFitsEmittedType(models.symbolic, grid, *expression, name);
    } catch (const isl::exception& error) {
      width = {false, std::string("isl could not bound the values ") + name + " computes: " + error.what(), ""};
    }
    if (!width.fits) {
      proof.proven = false;
      proof.failure = width.failure;
      proof.counterexample = width.counterexample;
      return;
    }
  }
  proof.statement += "; and every value the emitted code computes, intermediate ones included, lies in [0, 2^32) "
                     "for every admissible parameter value, so its " + std::string(kEmittedTypeName) +
                     " arithmetic does not wrap";
}

bool uniformValue(const ProofModels& models, const PolicyResult& policy) {
  try {
    const analysis::IslOperationBudget budget(models.symbolic.ctx(), analysis::kIslProofOperations);
    return isUniform(models.symbolic, policy.candidate.producerGrid, policy.functions.value);
  } catch (const NotAffine&) {
  } catch (const isl::exception&) {
  }
  try {
    const analysis::IslOperationBudget budget(models.concrete.ctx(), analysis::kIslProofOperations);
    return isUniform(models.concrete, policy.candidate.producerGrid, policy.functions.value);
  } catch (...) {
    return false;
  }
}

// Proves an order and records it, marked as a repetition if an earlier order of its grid is equal on every tile.
void addOrder(const ProofModels& models, Generation& generation, TileOrderCandidate candidate) {
  TileOrderResult result{std::move(candidate), {}, ""};
  const std::string& grid = result.order.grid;
  result.proof = guarded([&] { return proveTileOrder(models, grid, result.order.index); });
  // A chain order also computes the consumer tile and grid it hands to the consumer's order.
  std::vector<std::pair<std::string, const IndexExpression*>> functions{{"index", &result.order.index}};
  for (const IndexExpression& e : result.order.semaphoreCoordinates) functions.push_back({"index", &e});
  for (const IndexExpression& e : result.order.semaphoreExtents) functions.push_back({"index", &e});
  requireEmittedWidth(models, grid, functions, result.proof);
  for (const TileOrderResult& earlier : generation.orders) {
    if (!result.proof.proven) break;
    if (earlier.order.grid == grid && earlier.proof.proven && earlier.sameAs.empty() &&
        agreeOnGrid(models, grid, earlier.order.index, result.order.index)) {
      result.sameAs = earlier.order.structName();
      break;
    }
  }
  generation.orders.push_back(std::move(result));
}

}  // namespace

bool Generation::allProven() const {
  return std::all_of(policies.begin(), policies.end(), [](const PolicyResult& p) { return p.proof.proven; }) &&
         std::all_of(producerPolicies.begin(), producerPolicies.end(),
                     [](const ProducerPolicyResult& p) { return p.proof.proven; }) &&
         std::all_of(orders.begin(), orders.end(), [](const TileOrderResult& o) { return o.proof.proven; });
}

std::vector<const PolicyResult*> Generation::emittedPolicies() const {
  std::vector<const PolicyResult*> emitted;
  for (const PolicyResult& policy : policies)
    if (policy.proof.proven) emitted.push_back(&policy);
  return emitted;
}

std::vector<const ProducerPolicyResult*> Generation::emittedProducerPolicies() const {
  std::vector<const ProducerPolicyResult*> emitted;
  for (const ProducerPolicyResult& policy : producerPolicies)
    if (policy.proof.proven) emitted.push_back(&policy);
  return emitted;
}

std::vector<const TileOrderResult*> Generation::emittedOrders() const {
  std::vector<const TileOrderResult*> emitted;
  for (const TileOrderResult& order : orders)
    if (order.proof.proven && order.sameAs.empty()) emitted.push_back(&order);
  return emitted;
}

Generation generate(const ProofModels& models, const OptimizationOptions& options) {
  Generation generation;
  const spec::Spec& spec = models.symbolic.spec();
  generation.spec = spec;
  generation.specName = spec.name;
  generation.symbolicParameters = models.symbolic.symbolicParameters();
  generation.parameterValues = models.concrete.parameterValues();
  generation.optimizationOptions = options;

  CandidateDerivation derivation = derivePolicyCandidates(models.symbolic);
  generation.dropped = std::move(derivation.dropped);
  for (PolicyCandidate& candidate : derivation.candidates) {
    PolicyResult result{std::move(candidate), {}, {}};
    result.functions = policyFunctions(result.candidate);
    result.proof = guarded([&] { return provePolicy(models, result.candidate, result.functions); });
    const PolicyFunctions& f = result.functions;
    requireEmittedWidth(models, result.candidate.producerGrid,
                        {{"semaphoreCount", &f.semaphoreCount}, {"sem", &f.semaphore}, {"value", &f.value},
                         {"rankInSemaphore", &f.rankInSemaphore}},
                        result.proof);
    generation.policies.push_back(std::move(result));
  }

  // A stage posts under one policy: producers read by several dependencies get policies proven for all of them.
  std::vector<PolicyCandidate> candidates;
  for (const PolicyResult& policy : generation.policies) candidates.push_back(policy.candidate);
  generation.producerPolicies = deriveProducerPolicies(models, candidates);
  for (ProducerPolicyResult& policy : generation.producerPolicies) {
    const PolicyFunctions& f = policy.functions;
    requireEmittedWidth(models, policy.producerGrid,
                        {{"semaphoreCount", &f.semaphoreCount}, {"sem", &f.semaphore}, {"value", &f.value},
                         {"rankInSemaphore", &f.rankInSemaphore}},
                        policy.proof);
  }

  // Orders per grid in declaration order: RowMajor first, then the grouped orders of the proven policies.
  for (const spec::Grid& grid : spec.grids) {
    std::vector<TileOrderCandidate> candidates{rowMajorOrder(grid.name, static_cast<int>(grid.dimensions.size()))};
    for (const PolicyResult& policy : generation.policies)
      if (policy.proof.proven && policy.candidate.producerGrid == grid.name && uniformValue(models, policy))
        candidates.push_back(groupedOrder(policy.candidate, policy.functions));
    for (TileOrderCandidate& candidate : candidates) addOrder(models, generation, std::move(candidate));
  }
  // Chain orders: a producer follows every non-row-major order of its consumer. A chain order found in one pass
  // can be followed by the producer before it in the next, so the passes walk a chain backwards.
  for (std::size_t pass = 0, known = 0; pass < spec.grids.size() && known != generation.orders.size(); ++pass) {
    known = generation.orders.size();
    std::vector<const TileOrderResult*> consumerOrders;
    for (const TileOrderResult& order : generation.orders)
      if (order.proof.proven && order.sameAs.empty() && order.order.name != "RowMajor") consumerOrders.push_back(&order);
    std::vector<TileOrderCandidate> candidates;
    for (const PolicyResult& policy : generation.policies) {
      if (!policy.proof.proven || !uniformValue(models, policy)) continue;
      for (const TileOrderResult* consumerOrder : consumerOrders) {
        if (consumerOrder->order.grid != policy.candidate.consumerGrid) continue;
        std::string name = "Chain_" + policy.candidate.policy + "_" + policy.candidate.dependency + "_" +
                           consumerOrder->order.name;
        bool seen = std::any_of(generation.orders.begin(), generation.orders.end(), [&](const TileOrderResult& o) {
          return o.order.grid == policy.candidate.producerGrid && o.order.name == name;
        });
        if (seen) continue;
        std::string whyNot;  // most policies' semaphores are not consumer tiles: not an error, not listed
        if (auto order = chainOrder(models, policy.candidate, policy.functions, consumerOrder->order, whyNot))
          candidates.push_back(std::move(*order));
      }
    }
    for (TileOrderCandidate& candidate : candidates) addOrder(models, generation, std::move(candidate));
  }

  generation.optimizations = analyzeOptimizations(models.symbolic, models.concrete, options);
  return generation;
}

}  // namespace cusync::codegen
