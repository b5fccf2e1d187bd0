#include <cusync/codegen/integer_width.h>
#include <cusync/codegen/policy_prover.h>

#include <isl/aff.h>
#include <isl/set.h>
#include <isl/val.h>

#include <algorithm>
#include <optional>
#include <sstream>

namespace cusync::codegen {
namespace {

using Kind = IndexExpression::Kind;

// Values far outside [0, 2^32) saturate here; they fail the check anyway, and products of in-range bounds fit.
constexpr __int128 kHuge = static_cast<__int128>(1) << 100;

struct Bounds {
  __int128 low = 0, high = 0;
};

__int128 toWide(const isl::val& value) {
  if (value.is_neginfty()) return -kHuge;
  if (value.is_infty()) return kHuge;
  long numerator = 0;
  if (isl_val_cmp_si(value.get(), static_cast<long>(1) << 62) > 0) return kHuge;
  if (isl_val_cmp_si(value.get(), -(static_cast<long>(1) << 62)) < 0) return -kHuge;
  numerator = isl_val_get_num_si(value.get());
  return numerator;
}

std::string text(__int128 value) {
  if (value >= kHuge) return "unbounded";
  if (value <= -kHuge) return "-unbounded";
  bool negative = value < 0;
  unsigned __int128 magnitude = negative ? -static_cast<unsigned __int128>(value) : value;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  return negative ? "-" + digits : digits;
}

template <typename T>
std::string islText(const T& object) {
  std::ostringstream out;
  out << object;
  return out.str();
}

class WidthChecker {
 public:
  WidthChecker(const analysis::IslModel& model, const std::string& grid, std::string function)
      : context_(gridContext(model, grid)), function_(std::move(function)) {}

  // Bounds of `e` over the grid's tiles; records the first subexpression found out of range.
  std::optional<Bounds> bounds(const IndexExpression& e) {
    std::vector<Bounds> operands;
    for (const IndexExpression& operand : e.operands) {
      auto b = bounds(operand);
      if (!b) return std::nullopt;
      operands.push_back(*b);
    }
    try {
      isl::pw_aff value = toIsl(e, context_).intersect_domain(context_.domain);
      Bounds exact{toWide(value.min_val()), toWide(value.max_val())};
      if (exact.low >= 0 && exact.high <= kEmittedTypeMax) return exact;
      isl::pw_aff zero = toIsl(constant(0), context_), top = toIsl(constant(kEmittedTypeMax), context_);
      isl::set outside = value.lt_set(zero).unite(value.gt_set(top)).intersect(context_.domain);
      proof_.counterexample = islText(isl::set(outside.sample_point()));
      return fail(e, exact, true, "");
    } catch (const NotAffine&) {
      // Interval arithmetic over the operands' bounds, each already within [0, 2^32).
    }
    Bounds b = combine(e, operands);
    if (b.low >= 0 && b.high <= kEmittedTypeMax) return b;
    std::string because = " (a bound from interval arithmetic: isl cannot bound a product of two symbolic values; "
                          "operand bounds";
    for (const Bounds& operand : operands) because += " [" + text(operand.low) + ", " + text(operand.high) + "]";
    return fail(e, b, false, because + ")");
  }

  WidthProof result() const { return proof_; }

 private:
  static Bounds combine(const IndexExpression& e, const std::vector<Bounds>& o) {
    switch (e.kind) {
      case Kind::Add: return {o[0].low + o[1].low, o[0].high + o[1].high};
      case Kind::Sub: return {o[0].low - o[1].high, o[0].high - o[1].low};
      case Kind::Mul: {
        __int128 corners[] = {o[0].low * o[1].low, o[0].low * o[1].high, o[0].high * o[1].low,
                              o[0].high * o[1].high};
        return {*std::min_element(std::begin(corners), std::end(corners)),
                *std::max_element(std::begin(corners), std::end(corners))};
      }
      case Kind::FloorDiv: return {o[0].low / e.operands[1].value, o[0].high / e.operands[1].value};
      case Kind::Mod: return {0, e.operands[1].value - 1};
      case Kind::Min: return {std::min(o[0].low, o[1].low), std::min(o[0].high, o[1].high)};
      default: break;
    }
    // Leaves are always affine: isl bounded them above.
    return {-kHuge, kHuge};
  }

  std::optional<Bounds> fail(const IndexExpression& e, Bounds b, bool exact, const std::string& because) {
    proof_.fits = false;
    proof_.failure = function_ + " computes " + toCpp(e, "tile", "grid") + " in " + kEmittedTypeName + ", which " +
                     (exact ? "ranges" : "may range") + " over [" + text(b.low) + ", " + text(b.high) +
                     "] for some tile and admissible parameter values: outside [0, " + text(kEmittedTypeMax) +
                     "], so the emitted code would wrap" + because;
    return std::nullopt;
  }

  IslGridContext context_;
  std::string function_;
  WidthProof proof_;
};

}  // namespace

WidthProof proveFitsEmittedType(const analysis::IslModel& model, const std::string& grid, const IndexExpression& e,
                                const std::string& function) {
  WidthChecker checker(model, grid, function);
  checker.bounds(e);
  return checker.result();
}

}  // namespace cusync::codegen
