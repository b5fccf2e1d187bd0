#include <cusync/codegen/policy_functions.h>

namespace cusync::codegen {
namespace {

struct DimensionFunctions {
  IndexExpression semaphore, semaphores, count, rank;
};

// The table in policy_functions.h, one row per grouping.
DimensionFunctions dimensionFunctions(const DimensionGrouping& grouping, int d) {
  IndexExpression t = coordinate(d), e = extent(d);
  switch (grouping.kind) {
    case Grouping::Separate:
      return {t, e, constant(1), constant(0)};
    case Grouping::Whole:
      return {constant(0), constant(1), e, t};
    case Grouping::Strided: {
      std::int64_t s = grouping.step;
      return {mod(t, s), constant(s), floorDiv(e - constant(1) - mod(t, s), s) + constant(1), floorDiv(t, s)};
    }
    case Grouping::Block: {
      std::int64_t n = grouping.step;
      return {floorDiv(t, n), floorDiv(e + constant(n - 1), n), min(constant(n), e - constant(n) * floorDiv(t, n)),
              mod(t, n)};
    }
  }
  return {t, e, constant(1), constant(0)};
}

}  // namespace

PolicyFunctions policyFunctions(const PolicyCandidate& candidate) {
  // Mixed radix, x fastest: built from the outermost dimension inwards (Horner's scheme).
  IndexExpression semaphore = constant(0), semaphoreCount = constant(1), value = constant(1), rank = constant(0);
  PolicyFunctions functions;
  for (int d = 0; d < 3; ++d) {
    functions.semaphoreCoordinates[d] = constant(0);
    functions.semaphoreExtents[d] = constant(1);
  }
  for (int d = static_cast<int>(candidate.dimensions.size()) - 1; d >= 0; --d) {
    DimensionFunctions f = dimensionFunctions(candidate.dimensions[d], d);
    semaphore = f.semaphore + f.semaphores * semaphore;
    rank = f.rank + f.count * rank;
    semaphoreCount = f.semaphores * semaphoreCount;
    value = f.count * value;
    if (d < 3) {
      functions.semaphoreCoordinates[d] = f.semaphore;
      functions.semaphoreExtents[d] = f.semaphores;
    }
  }
  functions.semaphore = semaphore;
  functions.semaphoreCount = semaphoreCount;
  functions.value = value;
  functions.rankInSemaphore = rank;
  return functions;
}

}  // namespace cusync::codegen
