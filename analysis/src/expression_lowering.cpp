#include "expression_lowering.h"

#include <cusync/dsl/print.h>

#include <isl/aff.h>
#include <isl/local_space.h>
#include <isl/space.h>
#include <isl/val.h>

#include <fmt/format.h>

#include <limits>

namespace cusync::analysis::detail {

std::optional<std::int64_t> toInt64(const isl::val& value) {
  if (value.is_null() || !isl_val_is_int(value.get())) return std::nullopt;
  if (isl_val_cmp_si(value.get(), std::numeric_limits<long>::max()) > 0 ||
      isl_val_cmp_si(value.get(), std::numeric_limits<long>::min()) < 0) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(isl_val_get_num_si(value.get()));
}

ExpressionLowering::ExpressionLowering(isl::ctx ctx, const spec::Spec& spec, const ParameterValues& values,
                                       const std::vector<std::string>& symbolicParameters,
                                       dsl::Diagnostics& diagnostics)
    : ctx_(ctx.get()), spec_(spec), values_(values), symbolic_(symbolicParameters), diagnostics_(diagnostics) {}

isl::space ExpressionLowering::setSpace(const std::string& tupleName,
                                        const std::vector<std::string>& dimensionNames) const {
  isl_space* space = isl_space_set_alloc(ctx_, static_cast<unsigned>(symbolic_.size()),
                                         static_cast<unsigned>(dimensionNames.size()));
  for (std::size_t i = 0; i < symbolic_.size(); ++i) {
    space = isl_space_set_dim_id(space, isl_dim_param, static_cast<unsigned>(i),
                                 isl_id_alloc(ctx_, symbolic_[i].c_str(), nullptr));
  }
  for (std::size_t i = 0; i < dimensionNames.size(); ++i) {
    space = isl_space_set_dim_name(space, isl_dim_set, static_cast<unsigned>(i), dimensionNames[i].c_str());
  }
  if (!tupleName.empty()) space = isl_space_set_tuple_name(space, isl_dim_set, tupleName.c_str());
  return isl::manage(space);
}

spec::SourceLocation ExpressionLowering::locationOf(const spec::Expr& expr, const spec::SourceLocation& fallback) {
  return expr.location.line > 0 ? expr.location : fallback;
}

void ExpressionLowering::fail(const spec::Expr& expr, const LoweringScope& scope, std::string message) {
  diagnostics_.error(locationOf(expr, scope.fallbackLocation), std::move(message));
  throw LoweringFailed{};
}

isl::pw_aff ExpressionLowering::variable(const LoweringScope& scope, isl_dim_type type, int position) const {
  isl_local_space* local = isl_local_space_from_space(scope.space.copy());
  isl_aff* aff = isl_aff_var_on_domain(local, type, static_cast<unsigned>(position));
  return isl::manage(isl_pw_aff_from_aff(aff));
}

isl::pw_aff ExpressionLowering::constant(const LoweringScope& scope, std::int64_t value) const {
  isl_local_space* local = isl_local_space_from_space(scope.space.copy());
  isl_aff* aff = isl_aff_val_on_domain(local, isl_val_int_from_si(ctx_, value));
  return isl::manage(isl_pw_aff_from_aff(aff));
}

std::optional<std::int64_t> ExpressionLowering::constantValue(const isl::pw_aff& value) {
  if (value.is_null() || isl_pw_aff_is_cst(value.get()) != isl_bool_true) return std::nullopt;
  if (isl_pw_aff_n_piece(value.get()) != 1) return std::nullopt;
  isl_aff* aff = isl_pw_aff_as_aff(value.copy());
  if (aff == nullptr) return std::nullopt;
  isl::val constant = isl::manage(isl_aff_get_constant_val(aff));
  isl_aff_free(aff);
  return toInt64(constant);
}

namespace {

bool mentionsDimension(const spec::Expr& e) {
  if (e.kind == spec::Expr::Kind::Dimension) return true;
  for (const auto& operand : e.operands)
    if (mentionsDimension(operand)) return true;
  return false;
}

}  // namespace

isl::pw_aff ExpressionLowering::lower(const spec::Expr& expr, const LoweringScope& scope) {
  // Deep expression trees come only from generated specs; the parser bounds nesting, this bounds the rest.
  struct DepthGuard {
    int& depth;
    explicit DepthGuard(int& d) : depth(++d) {}
    ~DepthGuard() { --depth; }
  } guard(depth_);
  if (depth_ > 400) fail(expr, scope, "expression nested too deeply");

  using Kind = spec::Expr::Kind;
  switch (expr.kind) {
    case Kind::Constant: return constant(scope, expr.value);

    case Kind::Parameter: {
      for (std::size_t i = 0; i < symbolic_.size(); ++i) {
        if (symbolic_[i] == expr.name) return variable(scope, isl_dim_param, static_cast<int>(i));
      }
      auto value = values_.find(expr.name);
      if (value == values_.end()) fail(expr, scope, fmt::format("unknown parameter '{}'", expr.name));
      return constant(scope, value->second);
    }

    case Kind::Dimension: {
      auto it = scope.dimensions.find(expr.name);
      if (it == scope.dimensions.end()) {
        bool declared = false;
        for (const auto& d : spec_.dimensions) declared = declared || d.name == expr.name;
        if (!declared) fail(expr, scope, fmt::format("unknown dimension '{}'", expr.name));
        fail(expr, scope, fmt::format("a {} cannot depend on dimension '{}'", scope.role, expr.name));
      }
      return variable(scope, isl_dim_set, it->second);
    }

    case Kind::GridExtent: {
      for (std::size_t g = 0; g < spec_.grids.size(); ++g) {
        const spec::Grid& grid = spec_.grids[g];
        if (grid.name != expr.name) continue;
        if (g >= scope.visibleGrids) {
          fail(expr, scope, fmt::format("a {} cannot use the extent of grid '{}' (declared at or after this "
                                        "one)",
                                        scope.role, grid.name));
        }
        if (expr.dimensionIndex < 0 || expr.dimensionIndex >= static_cast<int>(grid.extents.size())) {
          static constexpr const char* kNames[] = {"x", "y", "z"};
          fail(expr, scope, fmt::format("grid '{}' has {} dimension(s); it has no .{} extent", grid.name,
                                        grid.extents.size(),
                                        expr.dimensionIndex >= 0 && expr.dimensionIndex < 3
                                            ? kNames[expr.dimensionIndex]
                                            : "?"));
        }
        // An extent depends only on parameters and earlier grids, so it lowers in any scope.
        LoweringScope extentScope = scope;
        extentScope.dimensions.clear();
        extentScope.role = "grid extent";
        extentScope.visibleGrids = g;
        extentScope.fallbackLocation = grid.location;
        return lower(grid.extents[static_cast<std::size_t>(expr.dimensionIndex)], extentScope);
      }
      fail(expr, scope, fmt::format("unknown grid '{}'", expr.name));
    }
    case Kind::Add:
    case Kind::Sub:
    case Kind::Mul:
    case Kind::FloorDiv:
    case Kind::Mod:
    case Kind::Min:
    case Kind::Max: break;

    case Kind::Neg: {
      if (expr.operands.size() != 1) fail(expr, scope, "malformed negation");
      return lower(expr.operands[0], scope).neg();
    }
  }

  if (expr.operands.size() != 2) fail(expr, scope, "malformed binary expression");
  isl::pw_aff left = lower(expr.operands[0], scope);
  isl::pw_aff right = lower(expr.operands[1], scope);
  std::string text = dsl::toString(expr);
  switch (expr.kind) {
    case Kind::Add: return left.add(right);
    case Kind::Sub: return left.sub(right);
    // Piecewise: isl splits the domain where the operands cross, so a clipped bound stays exact.
    case Kind::Min: return left.min(right);
    case Kind::Max: return left.max(right);
    case Kind::Mul: {
      bool leftConstant = isl_pw_aff_is_cst(left.get()) == isl_bool_true;
      bool rightConstant = isl_pw_aff_is_cst(right.get()) == isl_bool_true;
      if (!leftConstant && !rightConstant) {
        if (auto product = products_.find(text); product != products_.end() && !mentionsDimension(expr))
          return variable(scope, isl_dim_param, product->second);
        if (auto refusal = productRefusals_.find(text); refusal != productRefusals_.end() && !mentionsDimension(expr))
          fail(expr, scope, fmt::format("{} is not affine: '{}' multiplies two symbolic values; {}", scope.role,
                                        text, refusal->second));
        fail(expr, scope, fmt::format("{} is not affine: '{}' multiplies {} by {}; one factor must be a constant "
                                      "(a number or concrete parameter)",
                                      scope.role, text, dsl::toString(expr.operands[0]),
                                      dsl::toString(expr.operands[1])));
      }
      return left.mul(right);
    }
    case Kind::FloorDiv:
    case Kind::Mod: {
      auto divisor = constantValue(right);
      if (!divisor) {
        fail(expr, scope, fmt::format("{} is not affine: '{}' divides by {}, which is not a constant (divisors "
                                      "must be numbers or concrete parameters)",
                                      scope.role, text, dsl::toString(expr.operands[1])));
      }
      if (*divisor == 0) {
        fail(expr, scope, fmt::format("division by zero: in '{}', {} is 0", text, dsl::toString(expr.operands[1])));
      }
      if (expr.kind == Kind::FloorDiv) return left.div(right).floor();
      if (*divisor < 0) {
        fail(expr, scope, fmt::format("modulo by a negative number: in '{}', {} is {}", text,
                                      dsl::toString(expr.operands[1]), *divisor));
      }
      return left.mod(isl::val(isl::ctx(ctx_), *divisor));
    }
    default: break;
  }
  fail(expr, scope, "unsupported expression");
}

}  // namespace cusync::analysis::detail
