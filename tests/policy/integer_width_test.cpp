// Integer width (integer_width.h): the emitted functions compute in std::uint32_t, so every value they compute,
// intermediate ones included, must lie in [0, 2^32) for every tile and admissible parameter value. Exact bounds
// from isl for quasi-affine subexpressions, interval arithmetic for products of symbolic values; and the
// generator emits only policies and orders whose arithmetic was proven not to wrap.
#include "model_fixture.h"
#include "spec_builder.h"

#include <cusync/codegen/integer_width.h>

using namespace cusync;
using namespace cusync::codegen;
using namespace cusync::policytest;

namespace {

// One grid g1 of X x Y tiles (symbolic where asked) read tile for tile by g2.
spec::Spec gridSpec(spec::Expr x, spec::Expr y, std::vector<std::pair<std::string, std::int64_t>> symbolic = {}) {
  SpecBuilder b("width");
  for (const auto& [name, value] : symbolic) b.parameter(name, value, true);
  b.grid("g1", {x, y});
  b.grid("g2", {x, y});
  b.dependency("dep", "g2", tile({dim("x"), dim("y")}), {{"g1", {tiles(tile({dim("x"), dim("y")}))}}});
  return b.spec;
}

}  // namespace

TEST_CASE("Integer width: row-major indices of the largest allowed grids fit", "[width]") {
  Models models = buildModels(gridSpec(num(46340), num(46340)));
  IndexExpression rowMajor = coordinate(0) + extent(0) * coordinate(1);
  CHECK(proveFitsEmittedType(*models.symbolic, "g1", rowMajor, "index").fits);
}

TEST_CASE("Integer width: a product past 2^32 is found exactly, with a tile where it wraps", "[width]") {
  Models models = buildModels(gridSpec(num(8192), num(4)));
  WidthProof proof = proveFitsEmittedType(*models.symbolic, "g1", coordinate(0) * constant(1 << 20), "sem");
  CHECK_FALSE(proof.fits);
  CHECK_THAT(proof.failure, Catch::Contains("sem computes (tile.x * 1048576u) in std::uint32_t, which ranges over "
                                            "[0, 8588886016]"));
  CHECK_THAT(proof.counterexample, Catch::Contains("g1["));
}

TEST_CASE("Integer width: a subtraction below zero is an unsigned wrap too", "[width]") {
  Models models = buildModels(gridSpec(num(4), num(4)));
  WidthProof proof = proveFitsEmittedType(*models.symbolic, "g1", coordinate(0) - constant(1) + constant(1), "value");
  CHECK_FALSE(proof.fits);
  CHECK_THAT(proof.failure, Catch::Contains("computes (tile.x - 1u) in std::uint32_t, which ranges over [-1, 2]"));
  CHECK(proveFitsEmittedType(*models.symbolic, "g1", extent(0) - constant(1) - coordinate(0), "value").fits);
}

TEST_CASE("Integer width: symbolic extents are bounded for every admissible value", "[width]") {
  // B <= kSymbolicBound: B * 2^22 fits below 2^32 only while B < 1024.
  Models models = buildModels(gridSpec(num(4), param("B"), {{"B", 3}}));
  CHECK(proveFitsEmittedType(*models.symbolic, "g1", extent(1) * constant(1 << 22), "semaphoreCount").fits);
  WidthProof tooWide = proveFitsEmittedType(*models.symbolic, "g1", extent(1) * constant(1 << 23), "semaphoreCount");
  CHECK_FALSE(tooWide.fits);
  CHECK_THAT(tooWide.counterexample, Catch::Contains("B = "));
}

TEST_CASE("Integer width: a product of two symbolic extents is bounded by interval arithmetic", "[width]") {
  Models models = buildModels(gridSpec(param("X"), param("Y"), {{"X", 4}, {"Y", 4}}));
  // X, Y <= 1000: X * Y * 4000 <= 4e9 < 2^32 fits; X * Y * 5000 may reach 5e9.
  CHECK(proveFitsEmittedType(*models.symbolic, "g1", extent(0) * extent(1) * constant(4000), "value").fits);
  WidthProof proof = proveFitsEmittedType(*models.symbolic, "g1", extent(0) * extent(1) * constant(5000), "value");
  CHECK_FALSE(proof.fits);
  CHECK_THAT(proof.failure, Catch::Contains("which may range over [5000, 5000000000]"));
  CHECK_THAT(proof.failure, Catch::Contains("interval arithmetic"));
}

TEST_CASE("Integer width: every emitted policy and order of the paper's specs is proven not to wrap", "[width]") {
  for (const spec::Spec& spec : {mlpSpec(), stridedSpec(), convSpec(), attentionSpec(), blockSpec()}) {
    Models models = buildModels(spec);
    Generation generation = generate(models.proofModels(), {});
    REQUIRE_FALSE(generation.emittedPolicies().empty());
    for (const PolicyResult* policy : generation.emittedPolicies())
      CHECK_THAT(policy->proof.statement, Catch::Contains("std::uint32_t arithmetic does not wrap"));
    for (const TileOrderResult* order : generation.emittedOrders())
      CHECK_THAT(order->proof.statement, Catch::Contains("std::uint32_t arithmetic does not wrap"));
  }
}
