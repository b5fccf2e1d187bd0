// Spec expressions read as affine forms over dimension variables.
//
// The policy derivation looks at how each producer tile coordinate is written (`x + H/(8*TileN)`, `x*s`, a ForAll
// over `x`) to find the tiles one consumer reads together along a dimension. It needs each coordinate as
// `sum(coefficient_v * v) + offset`, with integer coefficients and the variable-free offset evaluated at the
// model's parameter values. Host-only header.
#pragma once

#include <cusync/analysis/isl_model.h>
#include <cusync/dsl/spec.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace cusync::codegen {

// What an expression's parameters and grid extents mean: the spec and the values of its parameters.
struct ExpressionContext {
  const spec::Spec& spec;
  const analysis::ParameterValues& values;     // every parameter (symbolic ones at their example value)
  const std::vector<std::string>& symbolic;    // parameters that stay symbolic in the proofs
};

struct AffineForm {
  std::map<std::string, std::int64_t> coefficients;  // dimension variable -> non-zero coefficient
  std::int64_t offset = 0;                           // the variable-free part at the parameter values
  bool offsetIsSymbolic = false;                     // ... which depends on a symbolic parameter
  std::string offsetSource;                          // the variable-free part as the spec wrote it
};

// The affine form of `e`, or nullopt when `e` is not affine in the dimension variables with integer coefficients
// (e.g. `x*y`, `x/2`, or a coefficient that depends on a symbolic parameter).
std::optional<AffineForm> affineForm(const spec::Expr& e, const ExpressionContext& context);

// The value of a variable-free expression at the context's parameter values; nullopt if it mentions a dimension
// variable or divides by zero.
std::optional<std::int64_t> evaluate(const spec::Expr& e, const ExpressionContext& context);

// Whether `e` (after expanding grid extents) mentions a symbolic parameter.
bool involvesSymbolicParameter(const spec::Expr& e, const ExpressionContext& context);

}  // namespace cusync::codegen
