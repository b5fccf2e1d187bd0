#include <cusync/analysis/isl_operation_budget.h>
#include <cusync/codegen/parameter_condition.h>
#include <cusync/codegen/policy_prover.h>

#include <isl/map.h>
#include <isl/aff.h>
#include <isl/set.h>
#include <isl/space.h>

#include <functional>
#include <sstream>

namespace cusync::codegen {
namespace {

template <typename T>
std::string text(const T& object) {
  std::ostringstream out;
  out << object;
  return out.str();
}

std::string sampleOf(const isl::set& set) { return text(isl::set(set.sample_point())); }
std::string sampleOf(const isl::map& map) { return text(isl::manage(isl_map_from_basic_map(isl_map_sample(map.copy())))); }

isl::set domainOf(const analysis::IslModel& model, const std::string& grid) {
  return model.grid(grid).domain.intersect_params(model.context());
}

std::string parameterNames(const analysis::IslModel& model) {
  std::string names;
  for (const std::string& name : model.symbolicParameters()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

std::string parameterText(const analysis::IslModel& model) {
  if (model.symbolicParameters().empty()) {
    std::string values;
    for (const auto& [name, value] : model.parameterValues())
      values += (values.empty() ? "" : ", ") + name + " = " + std::to_string(value);
    return values.empty() ? "the spec (it has no parameters)" : "the parameter values " + values;
  }
  return "all " + parameterNames(model) + " with " + parameterCondition(model.context());
}

// { [v] -> [k] : 0 <= k < v }: the ranks a semaphore of value v must cover.
isl::map ranksBelow(isl::ctx ctx) { return isl::map(ctx, "{ [v] -> [k] : 0 <= k < v }"); }

Proof provePolicyIn(const analysis::IslModel& model, const PolicyCandidate& candidate,
                    const PolicyFunctions& functions) {
  Proof proof;
  proof.parameters = parameterText(model);
  const std::string& P = candidate.producerGrid;
  IslGridContext grid = gridContext(model, P);
  isl::set domain = domainOf(model, P);
  isl::pw_aff semaphore = toIsl(functions.semaphore, grid).intersect_domain(domain);
  isl::pw_aff count = toIsl(functions.semaphoreCount, grid).intersect_domain(domain);
  isl::pw_aff value = toIsl(functions.value, grid).intersect_domain(domain);
  isl::pw_aff rank = toIsl(functions.rankInSemaphore, grid).intersect_domain(domain);
  isl::pw_aff zero = toIsl(constant(0), grid).intersect_domain(domain);

  const analysis::DependencyModel& dependency = model.dependency(candidate.dependency);
  isl::map relation = dependency.producers[candidate.producerIndex].relation.intersect_range(domain)
                          .intersect_params(model.context());
  isl::set read = relation.range();  // W: producer tiles some consumer waits for

  proof.statement = "for " + proof.parameters + ": every " + P + " tile p has 0 <= sem(p) < semaphoreCount, and " +
                    "every " + P + " tile p read by a " + candidate.consumerGrid + " tile has value(p) == |{p' in " +
                    P + " : sem(p') == sem(p)}| (rankInSemaphore is a bijection from those tiles onto [0, value(p)))";

  auto fail = [&](std::string failure, std::string counterexample) {
    proof.proven = false;
    proof.failure = std::move(failure);
    proof.counterexample = std::move(counterexample);
    return proof;
  };

  isl::set outOfRange = semaphore.lt_set(zero).unite(semaphore.ge_set(count)).intersect(domain);
  if (!outOfRange.is_empty())
    return fail("sem(p) is outside [0, semaphoreCount) for some tile", sampleOf(outOfRange));

  isl::map semaphoreMap = semaphore.as_map();
  isl::map sameSemaphore = semaphoreMap.apply_range(semaphoreMap.reverse());  // p -> p' with sem(p') == sem(p)
  isl::map waitedSameSemaphore = sameSemaphore.intersect_domain(read);
  isl::set waitedTiles = read.apply(sameSemaphore);  // every tile that shares a semaphore with a read tile

  isl::map valueMap = value.as_map();
  isl::map differentValue = waitedSameSemaphore.subtract(valueMap.apply_range(valueMap.reverse()));
  if (!differentValue.is_empty())
    return fail("two tiles of one semaphore have different values", sampleOf(differentValue));

  isl::map rankMap = rank.as_map();
  isl::map rankCollision = sameSemaphore.intersect_domain(waitedTiles)
                               .intersect(rankMap.apply_range(rankMap.reverse()))
                               .subtract(domain.identity());
  if (!rankCollision.is_empty())
    return fail("two tiles of one semaphore have the same rank (the rank witness is not injective)",
                sampleOf(rankCollision));

  isl::set rankTooLarge = rank.lt_set(zero).unite(rank.ge_set(value)).intersect(waitedTiles);
  if (!rankTooLarge.is_empty())
    return fail("a waited semaphore has more tiles than its value (value(s) < |sem^-1(s)|: a consumer could pass "
                "its wait before every producer tile posted)",
                sampleOf(rankTooLarge));

  isl::map required = valueMap.intersect_domain(read).apply_range(ranksBelow(model.ctx()));
  isl::map achieved = waitedSameSemaphore.apply_range(rankMap);
  isl::map missing = required.subtract(achieved);
  if (!missing.is_empty())
    return fail("a waited semaphore has fewer tiles than its value (value(s) > |sem^-1(s)|: its consumers would "
                "wait forever)",
                sampleOf(missing));

  // Precision (not soundness): the producer tiles a consumer waits for, minus those it reads.
  isl::map waitedFor = relation.apply_range(sameSemaphore);
  isl::map notRead = waitedFor.subtract(relation);
  proof.exact = notRead.is_empty();
  if (!proof.exact) proof.overApproximation = sampleOf(notRead);
  proof.proven = true;
  return proof;
}

Proof proveTileOrderIn(const analysis::IslModel& model, const std::string& gridName, const IndexExpression& index) {
  Proof proof;
  proof.parameters = parameterText(model);
  IslGridContext grid = gridContext(model, gridName);
  isl::set domain = domainOf(model, gridName);
  isl::map order = toIsl(index, grid).intersect_domain(domain).as_map();
  isl::pw_aff tileCount = toIsl(extent(0) * extent(1) * extent(2), grid).intersect_domain(domain);
  proof.statement = "for " + proof.parameters + ": index is a bijection from the " + gridName +
                    " tiles onto [0, tileCount)";
  isl::map collisions = order.apply_range(order.reverse()).subtract(domain.identity());
  if (!collisions.is_empty()) {
    proof.failure = "two tiles have the same order index";
    proof.counterexample = sampleOf(collisions);
    return proof;
  }
  isl::set expected = tileCount.as_map().apply_range(ranksBelow(model.ctx())).range();
  isl::set produced = order.range();
  if (!produced.is_equal(expected)) {
    isl::set stray = produced.subtract(expected).unite(expected.subtract(produced));
    proof.failure = "the order indices are not exactly [0, tileCount)";
    proof.counterexample = sampleOf(stray);
    return proof;
  }
  proof.proven = true;
  return proof;
}

// One attempt at a proof within isl's operation budget (isl_operation_budget.h).
Proof proveWithinBudget(const analysis::IslModel& model,
                        const std::function<Proof(const analysis::IslModel&)>& prove) {
  const analysis::IslOperationBudget budget(model.ctx(), analysis::kIslProofOperations);
  return prove(model);
}

const std::string kOverBudget = "isl did not decide it within its budget of " +
                                std::to_string(analysis::kIslProofOperations) + " operations";

// Runs a proof on the symbolic model, or on the concrete one when the spec has no symbolic parameter, the functions
// are not quasi-affine in the symbolic parameters, or the symbolic proof exceeds isl's operation budget.
Proof proveWithFallback(const ProofModels& models, const std::function<Proof(const analysis::IslModel&)>& prove) {
  auto proveConcrete = [&](const std::string& why) {
    try {
      Proof proof = proveWithinBudget(models.concrete, prove);
      proof.scope = ProofScope::GivenParameterValues;
      if (!why.empty()) proof.scopeNote = why + ", so proven for the given values only";
      return proof;
    } catch (const NotAffine& notAffine) {
      Proof proof;
      proof.failure = std::string("cannot be proven with Presburger arithmetic: ") + notAffine.what();
      return proof;
    } catch (const isl::exception_quota&) {
      Proof proof;
      proof.failure = kOverBudget + " (simpler ranges, e.g. fewer nested divisions, keep a proof decidable)";
      return proof;
    }
  };
  if (!models.symbolic.symbolicParameters().empty()) {
    try {
      Proof proof = proveWithinBudget(models.symbolic, prove);
      proof.scope = ProofScope::AllParameterValues;
      return proof;
    } catch (const NotAffine& notAffine) {
      return proveConcrete(std::string("not quasi-affine in the symbolic parameters (") + notAffine.what() + ")");
    } catch (const isl::exception_quota&) {
      return proveConcrete("for all values of the symbolic parameters " + kOverBudget);
    }
  }
  return proveConcrete("");
}

}  // namespace

// An extent of the model is a function of the symbolic parameters, on a zero-dimensional (or parameter) domain;
// the prover needs it as a function on the grid's tiles, constant in them.
isl::pw_aff onGridDomain(const isl::pw_aff& extent, const isl::space& domainSpace) {
  isl_space* extentDomain = isl_pw_aff_get_domain_space(extent.get());
  bool isParameterDomain = isl_space_is_params(extentDomain) == isl_bool_true;
  if (isParameterDomain) {
    isl_space_free(extentDomain);
    return extent.insert_domain(domainSpace);
  }
  isl_space* projection = isl_space_map_from_domain_and_range(domainSpace.copy(), extentDomain);
  return isl::manage(isl_pw_aff_pullback_multi_aff(extent.copy(), isl_multi_aff_zero(projection)));
}

IslGridContext gridContext(const analysis::IslModel& model, const std::string& gridName) {
  const analysis::GridModel& grid = model.grid(gridName);
  IslGridContext context;
  context.domainSpace = grid.domain.space();
  context.rank = static_cast<int>(grid.grid.dimensions.size());
  context.domain = grid.domain.intersect_params(model.context());
  for (const isl::pw_aff& extent : grid.extents)
    context.extentsOnDomain.push_back(onGridDomain(extent, context.domainSpace));
  return context;
}

Proof provePolicy(const ProofModels& models, const PolicyCandidate& candidate, const PolicyFunctions& functions) {
  return proveWithFallback(models, [&](const analysis::IslModel& model) {
    return provePolicyIn(model, candidate, functions);
  });
}

Proof proveCovers(const analysis::IslModel& model, const PolicyCandidate& candidate, const PolicyFunctions& functions,
                  const isl::map& reads) {
  Proof proof;
  proof.parameters = parameterText(model);
  proof.scope = model.symbolicParameters().empty() ? ProofScope::GivenParameterValues : ProofScope::AllParameterValues;
  const std::string& P = candidate.producerGrid;
  const std::string& C = candidate.consumerGrid;
  isl::set producerDomain = domainOf(model, P);
  isl::set consumerDomain = domainOf(model, C);
  isl::map semaphoreMap = toIsl(functions.semaphore, gridContext(model, P)).intersect_domain(producerDomain).as_map();
  isl::map sameSemaphore = semaphoreMap.apply_range(semaphoreMap.reverse());
  isl::map listed = model.dependency(candidate.dependency).producers[candidate.producerIndex].relation
                        .intersect_range(producerDomain)
                        .intersect_params(model.context());
  isl::map waitedFor = listed.apply_range(sameSemaphore);  // c -> every tile of a semaphore c waits on
  proof.statement = "for " + proof.parameters + ": every " + P + " tile a " + C + " tile c reads shares a " +
                    "semaphore with a tile dependency `" + candidate.dependency + "` lists for c, so c waits for it";
  isl::map missing = reads.intersect_params(model.context()).intersect_domain(consumerDomain).subtract(waitedFor);
  if (!missing.is_empty()) {
    proof.failure = "a consumer tile reads a producer tile it does not wait for (the spec's tiles are too few)";
    proof.counterexample = sampleOf(missing);
    return proof;
  }
  proof.proven = true;
  return proof;
}

Proof proveTileOrder(const ProofModels& models, const std::string& grid, const IndexExpression& index) {
  return proveWithFallback(models, [&](const analysis::IslModel& model) {
    return proveTileOrderIn(model, grid, index);
  });
}

bool isUniform(const analysis::IslModel& model, const std::string& gridName, const IndexExpression& e) {
  isl::set domain = domainOf(model, gridName);
  isl::map values = toIsl(e, gridContext(model, gridName)).intersect_domain(domain).as_map();
  isl::map allPairs = isl::manage(isl_map_from_domain_and_range(domain.copy(), domain.copy()));
  return allPairs.subtract(values.apply_range(values.reverse())).is_empty();
}

bool agreeOnGrid(const ProofModels& models, const std::string& grid, const IndexExpression& a,
                 const IndexExpression& b) {
  if (a == b) return true;
  // Only an equality proven for all admissible parameter values counts: an order equal to another at the given
  // values but not symbolically comparable is kept (emitting a duplicate is harmless, dropping a distinct one not).
  const analysis::IslModel& model =
      models.symbolic.symbolicParameters().empty() ? models.concrete : models.symbolic;
  try {
    IslGridContext context = gridContext(model, grid);
    isl::set domain = domainOf(model, grid);
    return toIsl(a, context).intersect_domain(domain).as_map().is_equal(
        toIsl(b, context).intersect_domain(domain).as_map());
  } catch (const NotAffine&) {
    return false;
  } catch (const isl::exception&) {
    return false;
  }
}

}  // namespace cusync::codegen
