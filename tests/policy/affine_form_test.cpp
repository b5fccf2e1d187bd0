// How the derivation reads tile coordinates: affine forms, evaluation, source text.
#include "spec_builder.h"

#include <cusync/codegen/affine_form.h>

#include <catch2/catch.hpp>

using namespace cusync;
using namespace cusync::policytest;

TEST_CASE("Tile coordinates read as affine forms over the dimension variables", "[affine]") {
  SpecBuilder b("forms");
  b.parameter("H", 12288).parameter("TileN", 128).parameter("s", 2).parameter("B", 4, true);
  b.grid("g1", {num(36), param("B")});
  analysis::ParameterValues values{{"H", 12288}, {"TileN", 128}, {"s", 2}, {"B", 4}};
  std::vector<std::string> symbolic{"B"};
  codegen::ExpressionContext context{b.spec, values, symbolic};

  auto strided = codegen::affineForm(dim("x") + param("H") / (num(8) * param("TileN")), context);
  REQUIRE(strided.has_value());
  CHECK(strided->coefficients == std::map<std::string, std::int64_t>{{"x", 1}});
  CHECK(strided->offset == 12);
  CHECK_FALSE(strided->offsetIsSymbolic);
  CHECK(strided->offsetSource == "H/(8*TileN)");

  auto scaled = codegen::affineForm(dim("x") * param("s"), context);
  REQUIRE(scaled.has_value());
  CHECK(scaled->coefficients.at("x") == 2);

  auto shifted = codegen::affineForm(dim("y") + param("B"), context);
  REQUIRE(shifted.has_value());
  CHECK(shifted->offsetIsSymbolic);

  CHECK_FALSE(codegen::affineForm(dim("x") * dim("y"), context).has_value());          // not affine
  CHECK_FALSE(codegen::affineForm((dim("x") + num(1)) / num(2), context).has_value());  // division of a variable
  CHECK_FALSE(codegen::affineForm(dim("x") * param("B"), context).has_value());         // symbolic coefficient
}

TEST_CASE("Variable-free expressions evaluate with floor division and grid extents", "[affine]") {
  SpecBuilder b("values");
  b.parameter("N", 7);
  b.grid("g", {param("N") / num(2), num(3)});
  analysis::ParameterValues values{{"N", 7}};
  std::vector<std::string> symbolic;
  codegen::ExpressionContext context{b.spec, values, symbolic};
  CHECK(codegen::evaluate(extentOf("g", 0), context) == 3);
  CHECK(codegen::evaluate(num(-7) / num(2), context) == -4);
  CHECK_FALSE(codegen::evaluate(param("N") / num(0), context).has_value());
  CHECK_FALSE(codegen::evaluate(dim("x"), context).has_value());
}
