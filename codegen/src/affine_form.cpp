#include <cusync/codegen/affine_form.h>
#include <cusync/dsl/print.h>

#include <algorithm>

namespace cusync::codegen {
namespace {

using Kind = spec::Expr::Kind;

const spec::Grid* findGrid(const spec::Spec& spec, const std::string& name) {
  for (const spec::Grid& grid : spec.grids)
    if (grid.name == name) return &grid;
  return nullptr;
}

std::int64_t floorDivide(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Affine forms are combined exactly: coefficients add, offsets add, the offset's source text concatenates.
AffineForm add(AffineForm a, const AffineForm& b, std::int64_t sign, const std::string& op) {
  for (const auto& [variable, coefficient] : b.coefficients) {
    a.coefficients[variable] += sign * coefficient;
    if (a.coefficients[variable] == 0) a.coefficients.erase(variable);
  }
  a.offset += sign * b.offset;
  a.offsetIsSymbolic = a.offsetIsSymbolic || b.offsetIsSymbolic;
  if (b.offsetSource != "0") a.offsetSource = a.offsetSource == "0" ? (sign < 0 ? "-" : "") + b.offsetSource
                                                                    : a.offsetSource + " " + op + " " + b.offsetSource;
  return a;
}

AffineForm scale(AffineForm a, std::int64_t factor) {
  for (auto& entry : a.coefficients) entry.second *= factor;
  std::erase_if(a.coefficients, [](const auto& entry) { return entry.second == 0; });
  a.offset *= factor;
  if (a.offsetSource != "0") a.offsetSource = std::to_string(factor) + "*(" + a.offsetSource + ")";
  return a;
}

AffineForm variableFree(const spec::Expr& e, std::int64_t value, bool symbolic) {
  AffineForm form;
  form.offset = value;
  form.offsetIsSymbolic = symbolic;
  form.offsetSource = dsl::toString(e);
  return form;
}

bool mentionsDimension(const spec::Expr& e) {
  if (e.kind == Kind::Dimension) return true;
  return std::any_of(e.operands.begin(), e.operands.end(), mentionsDimension);
}

}  // namespace

std::optional<std::int64_t> evaluate(const spec::Expr& e, const ExpressionContext& context) {
  auto operand = [&](int i) { return evaluate(e.operands[i], context); };
  switch (e.kind) {
    case Kind::Constant: return e.value;
    case Kind::Parameter: {
      auto it = context.values.find(e.name);
      if (it == context.values.end()) return std::nullopt;
      return it->second;
    }
    case Kind::Dimension: return std::nullopt;
    case Kind::GridExtent: {
      const spec::Grid* grid = findGrid(context.spec, e.name);
      if (grid == nullptr || e.dimensionIndex < 0 || e.dimensionIndex >= static_cast<int>(grid->extents.size()))
        return std::nullopt;
      return evaluate(grid->extents[e.dimensionIndex], context);
    }
    case Kind::Neg: {
      auto a = operand(0);
      if (!a) return std::nullopt;
      return -*a;
    }
    default: break;
  }
  auto a = operand(0), b = operand(1);
  if (!a || !b) return std::nullopt;
  switch (e.kind) {
    case Kind::Add: return *a + *b;
    case Kind::Sub: return *a - *b;
    case Kind::Mul: return *a * *b;
    case Kind::FloorDiv:
      if (*b == 0) return std::nullopt;
      return floorDivide(*a, *b);
    case Kind::Mod:
      if (*b == 0) return std::nullopt;
      return *a - *b * floorDivide(*a, *b);
    case Kind::Min: return std::min(*a, *b);
    case Kind::Max: return std::max(*a, *b);
    default: return std::nullopt;
  }
}

bool involvesSymbolicParameter(const spec::Expr& e, const ExpressionContext& context) {
  if (e.kind == Kind::Parameter)
    return std::find(context.symbolic.begin(), context.symbolic.end(), e.name) != context.symbolic.end();
  if (e.kind == Kind::GridExtent) {
    const spec::Grid* grid = findGrid(context.spec, e.name);
    if (grid == nullptr || e.dimensionIndex < 0 || e.dimensionIndex >= static_cast<int>(grid->extents.size()))
      return false;
    return involvesSymbolicParameter(grid->extents[e.dimensionIndex], context);
  }
  return std::any_of(e.operands.begin(), e.operands.end(),
                     [&](const spec::Expr& operand) { return involvesSymbolicParameter(operand, context); });
}

std::optional<AffineForm> affineForm(const spec::Expr& e, const ExpressionContext& context) {
  if (!mentionsDimension(e)) {
    auto value = evaluate(e, context);
    if (!value) return std::nullopt;
    return variableFree(e, *value, involvesSymbolicParameter(e, context));
  }
  switch (e.kind) {
    case Kind::Dimension: {
      AffineForm form;
      form.coefficients[e.name] = 1;
      form.offsetSource = "0";
      return form;
    }
    case Kind::Neg: {
      auto a = affineForm(e.operands[0], context);
      if (!a) return std::nullopt;
      return scale(*a, -1);
    }
    case Kind::Add:
    case Kind::Sub: {
      auto a = affineForm(e.operands[0], context), b = affineForm(e.operands[1], context);
      if (!a || !b) return std::nullopt;
      return e.kind == Kind::Add ? add(*a, *b, 1, "+") : add(*a, *b, -1, "-");
    }
    case Kind::Mul: {
      // Affine only if one factor is variable-free; its value must not depend on a symbolic parameter, because
      // the coefficient decides how tiles group (a symbolic stride cannot be emitted as a constant).
      int constantSide = mentionsDimension(e.operands[0]) ? 1 : 0;
      if (mentionsDimension(e.operands[constantSide])) return std::nullopt;
      if (involvesSymbolicParameter(e.operands[constantSide], context)) return std::nullopt;
      auto factor = evaluate(e.operands[constantSide], context);
      auto form = affineForm(e.operands[1 - constantSide], context);
      if (!factor || !form) return std::nullopt;
      return scale(*form, *factor);
    }
    default:
      return std::nullopt;  // floor division, modulo, min or max of a dimension variable
  }
}

}  // namespace cusync::codegen
