// Lowering spec expressions to isl piecewise quasi-affine functions, with the checks that make them so.
//
// Concrete parameters become constants, symbolic ones isl parameters. A product needs one constant factor; a
// division or modulo needs a constant non-zero divisor (floor semantics, as in isl); min and max are piecewise. Anything else is reported at
// the expression's location with why it is not affine.
#pragma once

#include <cusync/analysis/isl_model.h>

#include <isl/cpp.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cusync::analysis::detail {

// Thrown after a diagnostic has been reported, to abandon the declaration being lowered.
struct LoweringFailed {};

// What the variables of a lowered expression are: the set dimensions of `space`, bound to dimension names.
struct LoweringScope {
  isl::space space;                          // a set space: symbolic parameters + the bound dimensions
  std::map<std::string, int> dimensions;     // dimension name -> set dimension position in `space`
  std::string role;                          // "grid extent", "tile coordinate", ... for messages
  std::size_t visibleGrids = 0;              // grid extents of spec.grids[0, visibleGrids) may be referenced
  spec::SourceLocation fallbackLocation;     // for expressions without a location (embedded DSL)
};

class ExpressionLowering {
 public:
  ExpressionLowering(isl::ctx ctx, const spec::Spec& spec, const ParameterValues& values,
                     const std::vector<std::string>& symbolicParameters, dsl::Diagnostics& diagnostics);

  // A set space with the symbolic parameters and the named set dimensions, tuple `tupleName` (may be empty).
  isl::space setSpace(const std::string& tupleName, const std::vector<std::string>& dimensionNames) const;

  isl::pw_aff lower(const spec::Expr& expr, const LoweringScope& scope);

  // Products of two symbolic values (parameter_products.h): `name` (the product as written) lowers to the isl
  // parameter at `parameterIndex`; a refused one fails with `why`.
  void defineProduct(const std::string& name, int parameterIndex) { products_[name] = parameterIndex; }
  void refuseProduct(const std::string& name, std::string why) { productRefusals_[name] = std::move(why); }

  // The value of a parameter-free, dimension-free pw_aff (e.g. a concrete extent); nullopt if not constant.
  static std::optional<std::int64_t> constantValue(const isl::pw_aff& value);

  // A location to report `expr` at.
  static spec::SourceLocation locationOf(const spec::Expr& expr, const spec::SourceLocation& fallback);

 private:
  [[noreturn]] void fail(const spec::Expr& expr, const LoweringScope& scope, std::string message);
  isl::pw_aff variable(const LoweringScope& scope, isl_dim_type type, int position) const;
  isl::pw_aff constant(const LoweringScope& scope, std::int64_t value) const;

  isl_ctx* ctx_;
  const spec::Spec& spec_;
  const ParameterValues& values_;
  std::vector<std::string> symbolic_;
  dsl::Diagnostics& diagnostics_;
  std::map<std::string, int> products_;
  std::map<std::string, std::string> productRefusals_;
  int depth_ = 0;
};

// isl integer -> int64, or nullopt when it does not fit (or is not an integer).
std::optional<std::int64_t> toInt64(const isl::val& value);

}  // namespace cusync::analysis::detail
