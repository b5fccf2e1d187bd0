// Products of two symbolic values (`B*S` with B and S both symbolic, as the paper's attention spec writes it).
//
// Presburger arithmetic cannot multiply two variables, so isl cannot take B*S as it is. It can take it by cases:
// when a factor takes few values under the spec's constraints (B in [1, 8]), the product is a fresh isl parameter
// `B*S` constrained by the union over those values, (B = 1 and B*S = S) or (B = 2 and B*S = 2S) or ... That
// union is exact: the admissible (B, S, B*S) are exactly those with B*S = B * S, so every proof, bounds check and
// counterexample over it is about real parameter values. A product whose factors both take more than
// kMaxProductCases values is refused, saying why and what to change.
#pragma once

#include "expression_lowering.h"

#include <cusync/dsl/spec.h>

#include <isl/cpp.h>

#include <map>
#include <string>
#include <vector>

namespace cusync::analysis::detail {

inline constexpr std::int64_t kMaxProductCases = 64;

struct ParameterProduct {
  std::string name;        // the product as written ("B*S"): the fresh parameter's name
  spec::Expr product;      // the Mul expression
  std::size_t casesOperand = 0;  // which operand takes few values
  std::int64_t low = 0, high = 0;  // its range under the constraints
};

struct ParameterProducts {
  std::vector<ParameterProduct> supported;
  std::map<std::string, std::string> refusals;  // product text -> why it cannot be taken by cases
};

// Finds the products of two symbolic values in the spec's extents, tiles, range bounds and constraints.
// `symbolic`: the symbolic parameters before any product is added.
ParameterProducts findParameterProducts(isl::ctx ctx, const spec::Spec& spec, const ParameterValues& values,
                                        const std::vector<std::string>& symbolic);

// The example value of a product: its factors at `values`.
std::int64_t productValue(isl::ctx ctx, const spec::Spec& spec, const ParameterValues& values,
                          const std::vector<std::string>& symbolic, const ParameterProduct& product);

// The parameter set defining the product's parameter (the union over the cases), lowered with `lowering`, which
// already knows the product's parameter.
isl::set productDefinition(ExpressionLowering& lowering, const LoweringScope& parameterScope,
                           const ParameterProduct& product, int parameterPosition);

}  // namespace cusync::analysis::detail
