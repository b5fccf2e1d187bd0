#include <cusync/codegen/generation.h>

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

bool uniformValue(const ProofModels& models, const PolicyResult& policy) {
  try {
    return isUniform(models.symbolic, policy.candidate.producerGrid, policy.functions.value);
  } catch (const NotAffine&) {
  } catch (const isl::exception&) {
  }
  try {
    return isUniform(models.concrete, policy.candidate.producerGrid, policy.functions.value);
  } catch (...) {
    return false;
  }
}

}  // namespace

bool Generation::allProven() const {
  return std::all_of(policies.begin(), policies.end(), [](const PolicyResult& p) { return p.proof.proven; }) &&
         std::all_of(orders.begin(), orders.end(), [](const TileOrderResult& o) { return o.proof.proven; });
}

std::vector<const PolicyResult*> Generation::emittedPolicies() const {
  std::vector<const PolicyResult*> emitted;
  for (const PolicyResult& policy : policies)
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
    generation.policies.push_back(std::move(result));
  }

  // Orders per grid in declaration order: RowMajor first, then the grouped orders of the proven policies.
  for (const spec::Grid& grid : spec.grids) {
    std::vector<TileOrderCandidate> candidates{rowMajorOrder(grid.name, static_cast<int>(grid.dimensions.size()))};
    for (const PolicyResult& policy : generation.policies)
      if (policy.proof.proven && policy.candidate.producerGrid == grid.name && uniformValue(models, policy))
        candidates.push_back(groupedOrder(policy.candidate, policy.functions));
    std::size_t firstOfGrid = generation.orders.size();
    for (TileOrderCandidate& candidate : candidates) {
      TileOrderResult result{std::move(candidate), {}, ""};
      result.proof = guarded([&] { return proveTileOrder(models, grid.name, result.order.index); });
      for (std::size_t i = firstOfGrid; i < generation.orders.size() && result.proof.proven; ++i) {
        const TileOrderResult& earlier = generation.orders[i];
        if (earlier.proof.proven && earlier.sameAs.empty() &&
            agreeOnGrid(models, grid.name, earlier.order.index, result.order.index)) {
          result.sameAs = earlier.order.structName();
          break;
        }
      }
      generation.orders.push_back(std::move(result));
    }
  }

  generation.optimizations = analyzeOptimizations(models.symbolic, models.concrete, options);
  return generation;
}

}  // namespace cusync::codegen
