#include "parameter_products.h"

#include <cusync/dsl/print.h>

#include <isl/aff.h>
#include <isl/local_space.h>
#include <isl/set.h>
#include <isl/val.h>

#include <fmt/format.h>

#include <optional>

namespace cusync::analysis::detail {
namespace {

bool mentionsDimension(const spec::Expr& e) {
  if (e.kind == spec::Expr::Kind::Dimension) return true;
  for (const auto& operand : e.operands)
    if (mentionsDimension(operand)) return true;
  return false;
}

// Lowering with the symbolic parameters as they are, errors kept out of the user's diagnostics (the real lowering
// reports them).
struct ScratchLowering {
  dsl::Diagnostics diagnostics;
  ExpressionLowering lowering;
  LoweringScope scope;
  ScratchLowering(isl::ctx ctx, const spec::Spec& spec, const ParameterValues& values,
                  const std::vector<std::string>& symbolic)
      : lowering(ctx, spec, values, symbolic, diagnostics),
        scope{lowering.setSpace("", {}), {}, "expression", spec.grids.size(), {}} {}
  std::optional<isl::pw_aff> lower(const spec::Expr& e, std::size_t visibleGrids) {
    LoweringScope s = scope;
    s.visibleGrids = visibleGrids;
    try {
      return lowering.lower(e, s);
    } catch (const LoweringFailed&) {
      return std::nullopt;
    } catch (const isl::exception&) {
      return std::nullopt;
    }
  }
};

// Every expression of the spec a product may appear in, with the grids it may refer to.
template <typename Visit>
void forEachExpression(const spec::Spec& spec, Visit visit) {
  for (const auto& p : spec.parameters)
    for (const auto& c : p.constraints) {
      visit(c.lhs, 0);
      visit(c.rhs, 0);
    }
  for (std::size_t g = 0; g < spec.grids.size(); ++g)
    for (const auto& e : spec.grids[g].extents) visit(e, g);
  for (const auto& d : spec.dependencies) {
    for (const auto& e : d.consumerTile.coordinates) visit(e, spec.grids.size());
    for (const auto& producer : d.producers)
      for (const auto& tiles : producer.tiles) {
        for (const auto& e : tiles.tile.coordinates) visit(e, spec.grids.size());
        for (const auto& r : tiles.ranges) {
          visit(r.range.lower, spec.grids.size());
          visit(r.range.upper, spec.grids.size());
        }
      }
  }
}

std::string text(const isl::val& v) {
  char* raw = isl_val_to_str(v.get());
  std::string out = raw ? raw : "?";
  free(raw);
  return out;
}

}  // namespace

ParameterProducts findParameterProducts(isl::ctx ctx, const spec::Spec& spec, const ParameterValues& values,
                                        const std::vector<std::string>& symbolic) {
  ParameterProducts result;
  if (symbolic.empty()) return result;
  ScratchLowering scratch(ctx, spec, values, symbolic);
  // The constraints that lower without products bound the factors.
  isl::set context = isl::set::universe(scratch.scope.space).params();
  for (const auto& p : spec.parameters)
    for (const auto& c : p.constraints) {
      auto lhs = scratch.lower(c.lhs, 0), rhs = scratch.lower(c.rhs, 0);
      if (!lhs || !rhs) continue;
      switch (c.relation) {
        case spec::Constraint::Relation::Less: context = context.intersect(lhs->lt_set(*rhs).params()); break;
        case spec::Constraint::Relation::LessEqual: context = context.intersect(lhs->le_set(*rhs).params()); break;
        case spec::Constraint::Relation::Equal: context = context.intersect(lhs->eq_set(*rhs).params()); break;
        case spec::Constraint::Relation::GreaterEqual: context = context.intersect(lhs->ge_set(*rhs).params()); break;
        case spec::Constraint::Relation::Greater: context = context.intersect(lhs->gt_set(*rhs).params()); break;
      }
    }
  auto visit = [&](auto&& self, const spec::Expr& e, std::size_t visibleGrids) -> void {
    for (const auto& operand : e.operands) self(self, operand, visibleGrids);
    if (e.kind != spec::Expr::Kind::Mul || e.operands.size() != 2) return;
    if (mentionsDimension(e.operands[0]) || mentionsDimension(e.operands[1])) return;
    std::string name = dsl::toString(e);
    if (result.refusals.count(name)) return;
    for (const auto& known : result.supported)
      if (known.name == name) return;
    auto a = scratch.lower(e.operands[0], visibleGrids), b = scratch.lower(e.operands[1], visibleGrids);
    if (!a || !b || isl_pw_aff_is_cst(a->get()) == isl_bool_true || isl_pw_aff_is_cst(b->get()) == isl_bool_true)
      return;
    std::string ranges;
    for (std::size_t i = 0; i < 2; ++i) {
      isl::pw_aff factor = (i == 0 ? *a : *b).intersect_params(context);
      isl::val low = factor.min_val(), high = factor.max_val();
      ranges += fmt::format("{}{} in [{}, {}]", i ? " and " : "", dsl::toString(e.operands[i]), text(low), text(high));
      if (!low.is_int() || !high.is_int()) continue;
      isl::val width = high.sub(low);
      if (width.ge(isl::val(ctx, kMaxProductCases))) continue;
      ParameterProduct product{name, e, i, low.get_num_si(), high.get_num_si()};
      result.supported.push_back(product);
      return;
    }
    result.refusals[name] = fmt::format(
        "isl takes a product of two symbolic values by cases over a factor with at most {} values under the "
        "constraints, and here {}: bound one factor more tightly, or make it a concrete Param",
        kMaxProductCases, ranges);
  };
  forEachExpression(spec, [&](const spec::Expr& e, std::size_t grids) { visit(visit, e, grids); });
  return result;
}

std::int64_t productValue(isl::ctx ctx, const spec::Spec& spec, const ParameterValues& values,
                          const std::vector<std::string>& symbolic, const ParameterProduct& product) {
  ScratchLowering scratch(ctx, spec, values, {});  // every parameter at its value
  (void)symbolic;
  std::int64_t result = 1;
  for (const auto& operand : product.product.operands) {
    auto value = scratch.lower(operand, spec.grids.size());
    result *= value ? ExpressionLowering::constantValue(*value).value_or(0) : 0;
  }
  return result;
}

isl::set productDefinition(ExpressionLowering& lowering, const LoweringScope& scope, const ParameterProduct& product,
                           int parameterPosition) {
  isl::pw_aff cases = lowering.lower(product.product.operands[product.casesOperand], scope);
  isl::pw_aff other = lowering.lower(product.product.operands[1 - product.casesOperand], scope);
  isl::pw_aff parameter = isl::manage(isl_pw_aff_from_aff(isl_aff_var_on_domain(
      isl_local_space_from_space(scope.space.copy()), isl_dim_param, static_cast<unsigned>(parameterPosition))));
  isl::set definition;
  for (std::int64_t v = product.low; v <= product.high; ++v) {
    isl::pw_aff constant = isl::manage(isl_pw_aff_from_aff(isl_aff_val_on_domain(
        isl_local_space_from_space(scope.space.copy()), isl_val_int_from_si(scope.space.ctx().get(), v))));
    isl::set piece = cases.eq_set(constant).intersect(parameter.eq_set(other.scale(isl::val(scope.space.ctx(), v))));
    definition = definition.is_null() ? piece : definition.unite(piece);
  }
  return definition.params().coalesce();
}

}  // namespace cusync::analysis::detail
