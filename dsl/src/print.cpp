#include <cusync/dsl/print.h>

#include <fmt/format.h>

namespace cusync::dsl {
namespace {

// Binding strength, as in C++: unary > multiplicative > additive.
int precedence(const spec::Expr& e) {
  switch (e.kind) {
    case spec::Expr::Kind::Add:
    case spec::Expr::Kind::Sub: return 1;
    case spec::Expr::Kind::Mul:
    case spec::Expr::Kind::FloorDiv:
    case spec::Expr::Kind::Mod: return 2;
    case spec::Expr::Kind::Neg: return 3;
    case spec::Expr::Kind::Constant: return e.value < 0 ? 3 : 4;
    default: return 4;
  }
}

std::string operand(const spec::Expr& e, int needed) {
  std::string text = toString(e);
  return precedence(e) < needed ? "(" + text + ")" : text;
}

}  // namespace

std::string toString(const spec::Expr& e) {
  static constexpr const char* kExtent[] = {"x", "y", "z"};
  switch (e.kind) {
    case spec::Expr::Kind::Constant: return std::to_string(e.value);
    case spec::Expr::Kind::Parameter:
    case spec::Expr::Kind::Dimension: return e.name;
    case spec::Expr::Kind::GridExtent:
      return e.dimensionIndex >= 0 && e.dimensionIndex < 3 ? fmt::format("{}.{}", e.name, kExtent[e.dimensionIndex])
                                                           : fmt::format("{}.<{}>", e.name, e.dimensionIndex);
    case spec::Expr::Kind::Neg:
      return e.operands.size() == 1 ? "-" + operand(e.operands[0], 3) : "-?";
    case spec::Expr::Kind::Min:
    case spec::Expr::Kind::Max:
      if (e.operands.size() != 2) return "?";
      return fmt::format("{}({}, {})", e.kind == spec::Expr::Kind::Min ? "min" : "max", toString(e.operands[0]),
                         toString(e.operands[1]));
    default: break;
  }
  if (e.operands.size() != 2) return "?";
  const char* op = e.kind == spec::Expr::Kind::Add   ? " + "
                   : e.kind == spec::Expr::Kind::Sub ? " - "
                   : e.kind == spec::Expr::Kind::Mul ? "*"
                   : e.kind == spec::Expr::Kind::Mod ? " % "
                                                     : "/";
  int p = precedence(e);
  // Left-associative: the right operand needs strictly higher precedence to go without parentheses.
  return operand(e.operands[0], p) + op + operand(e.operands[1], p + 1);
}

std::string toString(const spec::Tile& tile) {
  std::string out = "Tile(";
  for (std::size_t i = 0; i < tile.coordinates.size(); ++i) {
    out += (i ? ", " : "") + toString(tile.coordinates[i]);
  }
  return out + ")";
}

std::string toString(const spec::Range& range) {
  bool fromZero = range.lower.kind == spec::Expr::Kind::Constant && range.lower.value == 0;
  return fromZero ? fmt::format("Range({})", toString(range.upper))
                  : fmt::format("Range({}, {})", toString(range.lower), toString(range.upper));
}

std::string toString(const spec::TileSet& tileSet) {
  std::string out = toString(tileSet.tile);
  for (const auto& ranged : tileSet.ranges) {
    out = fmt::format("ForAll({}, {}, {})", out, ranged.dimension, toString(ranged.range));
  }
  return out;
}

std::string toString(const spec::Constraint& constraint) {
  static constexpr const char* kRelation[] = {"<", "<=", "==", ">=", ">"};
  return fmt::format("{} {} {}", toString(constraint.lhs), kRelation[static_cast<int>(constraint.relation)],
                     toString(constraint.rhs));
}

}  // namespace cusync::dsl
