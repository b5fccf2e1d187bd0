#include <cusync/codegen/index_expression.h>

#include <algorithm>
#include <isl/aff.h>
#include <isl/local_space.h>

namespace cusync::codegen {
namespace {

using Kind = IndexExpression::Kind;

IndexExpression binary(Kind kind, IndexExpression a, IndexExpression b) {
  IndexExpression e;
  e.kind = kind;
  e.operands = {std::move(a), std::move(b)};
  return e;
}

std::int64_t floorDivide(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

const char* coordinateName(int dimension) {
  static const char* names[] = {"x", "y", "z"};
  return names[dimension];
}

}  // namespace

IndexExpression constant(std::int64_t value) {
  IndexExpression e;
  e.kind = Kind::Constant;
  e.value = value;
  return e;
}

IndexExpression coordinate(int dimension) {
  IndexExpression e;
  e.kind = Kind::Coordinate;
  e.dimension = dimension;
  return e;
}

IndexExpression extent(int dimension) {
  IndexExpression e;
  e.kind = Kind::Extent;
  e.dimension = dimension;
  return e;
}

bool isConstant(const IndexExpression& e) { return e.kind == Kind::Constant; }

IndexExpression operator+(IndexExpression a, IndexExpression b) {
  if (isConstant(a) && isConstant(b)) return constant(a.value + b.value);
  if (isConstant(a) && a.value == 0) return b;
  if (isConstant(b) && b.value == 0) return a;
  return binary(Kind::Add, std::move(a), std::move(b));
}

IndexExpression operator-(IndexExpression a, IndexExpression b) {
  if (isConstant(a) && isConstant(b)) return constant(a.value - b.value);
  if (isConstant(b) && b.value == 0) return a;
  return binary(Kind::Sub, std::move(a), std::move(b));
}

IndexExpression operator*(IndexExpression a, IndexExpression b) {
  if (isConstant(a) && isConstant(b)) return constant(a.value * b.value);
  if ((isConstant(a) && a.value == 0) || (isConstant(b) && b.value == 0)) return constant(0);
  if (isConstant(a) && a.value == 1) return b;
  if (isConstant(b) && b.value == 1) return a;
  return binary(Kind::Mul, std::move(a), std::move(b));
}

IndexExpression floorDiv(IndexExpression a, std::int64_t divisor) {
  if (divisor == 1) return a;
  if (isConstant(a)) return constant(floorDivide(a.value, divisor));
  return binary(Kind::FloorDiv, std::move(a), constant(divisor));
}

IndexExpression mod(IndexExpression a, std::int64_t divisor) {
  if (divisor == 1) return constant(0);
  if (isConstant(a)) return constant(a.value - divisor * floorDivide(a.value, divisor));
  return binary(Kind::Mod, std::move(a), constant(divisor));
}

IndexExpression min(IndexExpression a, IndexExpression b) {
  if (isConstant(a) && isConstant(b)) return constant(std::min(a.value, b.value));
  if (a == b) return a;
  return binary(Kind::Min, std::move(a), std::move(b));
}

IndexExpression substitute(const IndexExpression& e, const IndexExpression coordinates[3],
                           const IndexExpression extents[3]) {
  auto operand = [&](int i) { return substitute(e.operands[i], coordinates, extents); };
  switch (e.kind) {
    case Kind::Constant: return e;
    case Kind::Coordinate: return coordinates[e.dimension];
    case Kind::Extent: return extents[e.dimension];
    case Kind::Add: return operand(0) + operand(1);
    case Kind::Sub: return operand(0) - operand(1);
    case Kind::Mul: return operand(0) * operand(1);
    case Kind::FloorDiv: return floorDiv(operand(0), e.operands[1].value);
    case Kind::Mod: return mod(operand(0), e.operands[1].value);
    case Kind::Min: return min(operand(0), operand(1));
  }
  throw std::logic_error("substitute: unknown index expression kind");
}

std::string toCpp(const IndexExpression& e, const std::string& tileName, const std::string& gridName) {
  auto operand = [&](int i) { return toCpp(e.operands[i], tileName, gridName); };
  switch (e.kind) {
    case Kind::Constant:
      return std::to_string(e.value) + "u";
    case Kind::Coordinate:
      return tileName + "." + coordinateName(e.dimension);
    case Kind::Extent:
      return gridName + "." + coordinateName(e.dimension);
    case Kind::Add:
      return "(" + operand(0) + " + " + operand(1) + ")";
    case Kind::Sub:
      return "(" + operand(0) + " - " + operand(1) + ")";
    case Kind::Mul:
      return "(" + operand(0) + " * " + operand(1) + ")";
    case Kind::FloorDiv:  // operands are non-negative on tiles inside the grid, so C++ division is floor division
      return "(" + operand(0) + " / " + operand(1) + ")";
    case Kind::Mod:
      return "(" + operand(0) + " % " + operand(1) + ")";
    case Kind::Min: {
      std::string a = operand(0), b = operand(1);
      return "(" + a + " < " + b + " ? " + a + " : " + b + ")";
    }
  }
  throw std::logic_error("toCpp: unknown index expression kind");
}

std::int64_t evaluate(const IndexExpression& e, const std::int64_t coordinates[3], const std::int64_t extents[3]) {
  auto operand = [&](int i) { return evaluate(e.operands[i], coordinates, extents); };
  switch (e.kind) {
    case Kind::Constant: return e.value;
    case Kind::Coordinate: return coordinates[e.dimension];
    case Kind::Extent: return extents[e.dimension];
    case Kind::Add: return operand(0) + operand(1);
    case Kind::Sub: return operand(0) - operand(1);
    case Kind::Mul: return operand(0) * operand(1);
    case Kind::FloorDiv: return floorDivide(operand(0), operand(1));
    case Kind::Mod: {
      std::int64_t a = operand(0), b = operand(1);
      return a - b * floorDivide(a, b);
    }
    case Kind::Min: return std::min(operand(0), operand(1));
  }
  throw std::logic_error("evaluate: unknown index expression kind");
}

isl::pw_aff toIsl(const IndexExpression& e, const IslGridContext& grid) {
  isl::ctx ctx = grid.domainSpace.ctx();
  auto constantOnDomain = [&](std::int64_t value) {
    isl_local_space* space = isl_local_space_from_space(grid.domainSpace.copy());
    return isl::manage(isl_pw_aff_from_aff(isl_aff_val_on_domain(space, isl_val_int_from_si(ctx.get(), value))));
  };
  auto operand = [&](int i) { return toIsl(e.operands[i], grid); };
  switch (e.kind) {
    case Kind::Constant:
      return constantOnDomain(e.value);
    case Kind::Coordinate: {
      if (e.dimension >= grid.rank) return constantOnDomain(0);
      isl_local_space* space = isl_local_space_from_space(grid.domainSpace.copy());
      return isl::manage(isl_pw_aff_from_aff(isl_aff_var_on_domain(space, isl_dim_set, static_cast<unsigned>(e.dimension))));
    }
    case Kind::Extent:
      if (e.dimension >= grid.rank) return constantOnDomain(1);
      return grid.extentsOnDomain[e.dimension];
    case Kind::Add: return operand(0).add(operand(1));
    case Kind::Sub: return operand(0).sub(operand(1));
    case Kind::Mul: {
      isl::pw_aff a = operand(0), b = operand(1);
      // isl multiplies only when one factor is a constant; anything else is outside Presburger arithmetic. A factor
      // written piecewise (min(4, X - 4*(x/4)) with X = 16) may still be constant on the grid's tiles.
      if (!grid.domain.is_null()) {
        if (!isl_pw_aff_is_cst(a.get())) a = a.gist(grid.domain).coalesce();
        if (!isl_pw_aff_is_cst(b.get())) b = b.gist(grid.domain).coalesce();
      }
      if (!isl_pw_aff_is_cst(a.get()) && !isl_pw_aff_is_cst(b.get()))
        throw NotAffine("product of two non-constant factors: " + toCpp(e, "tile", "grid"));
      return a.mul(b);
    }
    case Kind::FloorDiv: {
      isl::pw_aff a = operand(0);
      isl_val* divisor = isl_val_int_from_si(ctx.get(), e.operands[1].value);
      return isl::manage(isl_pw_aff_floor(isl_pw_aff_scale_down_val(a.release(), divisor)));
    }
    case Kind::Mod: {
      isl::pw_aff a = operand(0);
      isl_val* divisor = isl_val_int_from_si(ctx.get(), e.operands[1].value);
      return isl::manage(isl_pw_aff_mod_val(a.release(), divisor));
    }
    case Kind::Min: return operand(0).min(operand(1));
  }
  throw std::logic_error("toIsl: unknown index expression kind");
}

}  // namespace cusync::codegen
