// The isl model: grid sets, dependency relations, tile conversion, and the errors that stop a spec from having one
// (non-affine expressions, division by zero, extents that are not positive, wrong tile arity, ...).
#include "spec_test_support.h"

#include <cusync/analysis/bounds_check.h>

#include <cusync/analysis/isl_model.h>
#include <cusync/dsl/parser.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

using namespace cusync;
using analysis::ConcreteTile;
using test::modelErrors;
using test::modelOrFail;
using test::parseOrFail;

namespace {

spec::Spec bundled(const std::string& relative) {
  return parseOrFail(test::readFile(test::sourcePath(relative)), relative);
}

analysis::ModelOptions bound(analysis::ParameterValues overrides = {}) {
  analysis::ModelOptions options;
  options.overrides = std::move(overrides);
  options.bindSymbolicParameters = true;
  return options;
}

}  // namespace

TEST_CASE("MLP grids are the tile sets of Figure 5a at the bound parameter values", "[model]") {
  auto model = modelOrFail(bundled("examples/mlp/gpt3_mlp.dep"), bound());
  CHECK(model.symbolicParameters().empty());
  const auto& g1 = model.grid("g1");
  REQUIRE(g1.extentValues.size() == 2);
  CHECK(g1.extentValues[0] == 48);  // 4*12288/(8*128)
  CHECK(g1.extentValues[1] == 8);   // 1024/128
  auto tiles = analysis::tilesOf(model, g1.domain);
  REQUIRE(tiles.size() == 48 * 8);
  CHECK(tiles.front() == ConcreteTile{"g1", {0, 0}});
  CHECK(tiles.back() == ConcreteTile{"g1", {47, 7}});
  CHECK(tiles[1] == ConcreteTile{"g1", {0, 1}});  // lexicographic: x outermost
}

TEST_CASE("parameter overrides (-D) change extents", "[model]") {
  auto model = modelOrFail(bundled("examples/mlp/gpt3_mlp.dep"), bound({{"M", 256}, {"TileN", 256}}));
  CHECK(model.grid("g1").extentValues[0] == 24);
  CHECK(model.grid("g1").extentValues[1] == 2);
  CHECK(model.parameterValues().at("M") == 256);
}

TEST_CASE("symbolic parameters become isl parameters constrained by the context", "[model]") {
  auto model = modelOrFail(bundled("examples/mlp/gpt3_mlp.dep"));
  REQUIRE(model.symbolicParameters() == std::vector<std::string>{"M"});
  const auto& g1 = model.grid("g1");
  CHECK(g1.extentValues[0] == 48);
  CHECK_FALSE(g1.extentValues[1].has_value());  // (M + TileM - 1)/TileM depends on M
  isl::set context = model.context();
  CHECK_FALSE(analysis::fixParameters(context, {{"M", 1}}).is_empty());
  CHECK_FALSE(analysis::fixParameters(context, {{"M", 4096}}).is_empty());
  CHECK(analysis::fixParameters(context, {{"M", 0}}).is_empty());
  CHECK(analysis::fixParameters(context, {{"M", 4097}}).is_empty());
  // With M fixed the symbolic grid has exactly the bound grid's tiles.
  auto fixed = analysis::fixParameters(g1.domain, {{"M", 512}});
  isl::set asSet = isl::manage(isl_set_project_out(fixed.release(), isl_dim_param, 0, 1));
  CHECK(analysis::tilesOf(model, asSet).size() == 48 * 4);
}

TEST_CASE("the MLP relation maps each consumer tile to the whole producer row", "[model]") {
  auto model = modelOrFail(bundled("examples/mlp/gpt3_mlp.dep"), bound({{"M", 256}}));
  const auto& relation = model.dependency("dep").producers.at(0).relation;
  auto pairs = analysis::tilePairsOf(model, relation);
  CHECK(pairs.size() == 96 * 2 * 48);  // every consumer tile of g2 reads 48 tiles of g1
  std::vector<analysis::TilePair> ofOneConsumer;
  std::copy_if(pairs.begin(), pairs.end(), std::back_inserter(ofOneConsumer), [](const analysis::TilePair& p) {
    return p.consumer == ConcreteTile{"g2", {5, 1}};
  });
  REQUIRE(ofOneConsumer.size() == 48);
  for (std::int64_t x = 0; x < 48; ++x) CHECK(ofOneConsumer[x].producer == ConcreteTile{"g1", {x, 1}});
}

TEST_CASE("strided and constant tiles of the attention spec", "[model]") {
  auto model = modelOrFail(bundled("examples/attention/attention.dep"), bound({{"B", 1}}));
  auto strided = analysis::tilePairsOf(model, model.dependency("dep1P").producers.at(0).relation);
  std::vector<ConcreteTile> read;
  for (const auto& p : strided) {
    if (p.consumer == ConcreteTile{"gP", {3, 2}}) read.push_back(p.producer);
  }
  CHECK(read == std::vector<ConcreteTile>{{"g1", {3, 2}}, {"g1", {15, 2}}});  // stride H/(8*TileN) = 12
  auto reduction = analysis::tilePairsOf(model, model.dependency("depTR1").producers.at(0).relation);
  for (const auto& p : reduction) CHECK(p.producer.coordinates.at(1) == 0);  // Tile(x, 0)
}

TEST_CASE("points convert back to tiles and parameter values", "[model]") {
  auto model = modelOrFail(bundled("examples/conv2d/conv2d.dep"));
  const auto& relation = model.dependency("dep").producers.at(0).relation;
  isl::set pairs = analysis::fixParameters(relation.wrap(), {{"B", 3}});
  isl::point point = pairs.sample_point();
  auto pair = model.tilePairOf(point);
  CHECK(pair.consumer.grid == "g2");
  CHECK(pair.producer.grid == "g1");
  CHECK(pair.producer.coordinates[0] == 2 * pair.consumer.coordinates[0]);  // Tile(x*s, y), s = 2
  CHECK(pair.producer.coordinates[1] == pair.consumer.coordinates[1]);
  CHECK(model.parameterValuesOf(point) == analysis::ParameterValues{{"B", 3}});
  CHECK_THAT(model.toString(), Catch::Contains("dependency dep (g2 -> g1)"));
}

// Range(max(...), min(...)) lowers to a piecewise relation: two tiles at the grid's edges, three inside.
TEST_CASE("min and max in Range bounds clip the relation piecewise", "[model]") {
  auto model = modelOrFail(parseOrFail(
      "Dim x, y;\nGrid g1(x, y, 1, 5);\nGrid g2(x, y, 1, 5);\n"
      "Dep d({g2, Tile(x, y)}, {g1, ForAll(Tile(x, y), y, Range(max(0, y - 1), min(g1.y, y + 2)))});"));
  std::map<std::int64_t, std::vector<std::int64_t>> read;
  for (const auto& pair : analysis::tilePairsOf(model, model.dependency("d").producers.at(0).relation))
    read[pair.consumer.coordinates.at(1)].push_back(pair.producer.coordinates.at(1));
  CHECK(read == std::map<std::int64_t, std::vector<std::int64_t>>{
                    {0, {0, 1}}, {1, {0, 1, 2}}, {2, {1, 2, 3}}, {3, {2, 3, 4}}, {4, {3, 4}}});
  // A symbolic operand makes the pieces depend on the parameter; max(y - B, 0) reads from 0 while y < B.
  auto symbolic = modelOrFail(parseOrFail(
      "Symbolic B = 2;\nWhere(B >= 1, B <= 4);\nDim x;\nGrid g1(x, 8);\nGrid g2(x, 8);\n"
      "Dep d({g2, Tile(x)}, {g1, ForAll(Tile(x), x, Range(max(x - B, 0), x + 1))});"),
                              bound({{"B", 3}}));
  isl::map relation = symbolic.dependency("d").producers.at(0).relation;
  CHECK(analysis::tilePairsOf(symbolic, relation).size() == 1 + 2 + 3 + 4 + 4 * 4);  // x reads min(x, 3) + 1
}

TEST_CASE("non-affine tile coordinates are errors at the expression", "[model][errors]") {
  auto spec = parseOrFail("Dim x, y;\nGrid g(x, y, 4, 4);\nDep d({g, Tile(x, y)}, {g, Tile(x*y, y)});");
  CHECK_THAT(modelErrors(spec), Catch::Contains("test.dep:3:34: error: tile coordinate is not affine: 'x*y' "
                                                "multiplies x by y"));
  auto divideBySymbol = parseOrFail("Symbolic B = 2;\nDim x;\nGrid g(x, 8);\nDep d({g, Tile(x)}, {g, Tile(x/B)});");
  CHECK_THAT(modelErrors(divideBySymbol),
             Catch::Contains("'x/B' divides by B, which is not a constant"));
  auto productOfSymbols = parseOrFail("Symbolic A = 2, B = 2;\nDim x;\nGrid g(x, A*B);\nDep d({g, Tile(x)}, {g, Tile(x)});");
  CHECK_THAT(modelErrors(productOfSymbols), Catch::Contains("extent of grid 'g' is not affine: 'A*B'"));
}

TEST_CASE("division by zero is an error", "[model][errors]") {
  auto spec = parseOrFail("Param T = 0;\nDim x;\nGrid g(x, 4/T);\nDep d({g, Tile(x)}, {g, Tile(x)});");
  CHECK_THAT(modelErrors(spec), Catch::Contains("test.dep:3:12: error: division by zero: in '4/T', T is 0"));
  auto byOverride =
      parseOrFail("Param T = 2;\nDim x;\nGrid g(x, 4);\nGrid h(x, 4);\nDep d({h, Tile(x)}, {g, Tile(x % T)});");
  CHECK(modelErrors(byOverride).empty());
  CHECK_THAT(modelErrors(byOverride, {{{"T", 0}}, false}), Catch::Contains("division by zero: in 'x % T', T is 0"));
}

TEST_CASE("extents must be at least 1, for every admissible symbolic value", "[model][errors]") {
  CHECK_THAT(modelErrors(parseOrFail("Dim x, y;\nGrid g(x, y, 4, 0);\nDep d({g, Tile(x, y)}, {g, Tile(x, y)});")),
             Catch::Contains("test.dep:2:17: error: y extent of grid 'g' is 0 (0 = 0); extents must be at least 1"));
  CHECK_THAT(modelErrors(parseOrFail("Dim x;\nGrid g(x, -3);\nDep d({g, Tile(x)}, {g, Tile(x)});")),
             Catch::Contains("x extent of grid 'g' is -3"));
  CHECK_THAT(modelErrors(parseOrFail("Param H = 100;\nDim x;\nGrid g(x, H/128);\nDep d({g, Tile(x)}, {g, Tile(x)});")),
             Catch::Contains("x extent of grid 'g' is 0 (H/128 = 0)"));
  std::string symbolic = modelErrors(parseOrFail(
      "Symbolic M = 1024;\nWhere(M >= 1);\nDim x;\nGrid g(x, M/128);\nDep d({g, Tile(x)}, {g, Tile(x)});"));
  CHECK_THAT(symbolic, Catch::Contains("x extent of grid 'g' is 0 (M/128 = 0)"));
  CHECK_THAT(symbolic, Catch::Contains("note: with M = 1"));
  // Constrained so that it cannot be 0: accepted.
  CHECK(modelErrors(parseOrFail("Symbolic M = 1024;\nWhere(M >= 128, M <= 8192);\nDim x;\nGrid g(x, M/128);\n"
                                "Grid h(x, M/128);\nDep d({h, Tile(x)}, {g, Tile(x)});"))
            .empty());
}

TEST_CASE("tiles must have one coordinate per grid dimension", "[model][errors]") {
  auto spec = parseOrFail("Dim x, y;\nGrid g1(x, y, 4, 4);\nGrid g2(x, y, 4, 4);\nDep d({g2, Tile(x)}, {g1, Tile(x, y)});");
  CHECK_THAT(modelErrors(spec), Catch::Contains("test.dep:4:12: error: consumer tile Tile(x) has 1 coordinate(s) but "
                                                "grid 'g2' has 2 dimension(s) (x, y)"));
  auto producer = parseOrFail("Dim x, y;\nGrid g1(x, 4);\nGrid g2(x, y, 4, 4);\nDep d({g2, Tile(x, y)}, {g1, Tile(x, y)});");
  CHECK_THAT(modelErrors(producer), Catch::Contains("producer tile Tile(x, y) has 2 coordinate(s) but grid 'g1' has 1"));
}

TEST_CASE("IR-level errors the C++ front end can produce", "[model][errors]") {
  auto spec = parseOrFail("Dim x;\nGrid g(x, 4);\nDep d({g, Tile(x)}, {g, Tile(x)});");
  SECTION("a dependency on an undeclared grid") {
    spec.dependencies[0].producers[0].grid = "g9";
    CHECK_THAT(modelErrors(spec), Catch::Contains("producer grid 'g9' is not declared"));
  }
  SECTION("a grid extent using its own grid") {
    spec.grids[0].extents[0].kind = spec::Expr::Kind::GridExtent;
    spec.grids[0].extents[0].name = "g";
    CHECK_THAT(modelErrors(spec), Catch::Contains("cannot use the extent of grid 'g'"));
  }
  SECTION("a redeclared name (nested C++ scopes)") {
    spec.dimensions.push_back(spec.dimensions[0]);
    CHECK_THAT(modelErrors(spec), Catch::Contains("redeclaration of 'x'"));
  }
  SECTION("a grid extent using a dimension") {
    spec.grids[0].extents[0].kind = spec::Expr::Kind::Dimension;
    spec.grids[0].extents[0].name = "x";
    CHECK_THAT(modelErrors(spec), Catch::Contains("cannot depend on dimension 'x'"));
  }
}

TEST_CASE("ranges must not be empty, constraints must hold, -D must name a parameter", "[model][errors]") {
  CHECK_THAT(modelErrors(parseOrFail("Dim x;\nGrid g(x, 4);\nDep d({g, Tile(x)}, {g, ForAll(Tile(x), x, Range(3, 3))});")),
             Catch::Contains("Range(3, 3) over 'x' is empty"));
  CHECK_THAT(modelErrors(parseOrFail("Symbolic M = 64;\nWhere(M >= 128);\nDim x;\nGrid g(x, 4);\n"
                                     "Dep d({g, Tile(x)}, {g, Tile(x)});")),
             Catch::Contains("test.dep:2:7: error: constraint 'M >= 128' does not hold for M = 64"));
  CHECK_THAT(modelErrors(parseOrFail("Dim x;\nGrid g(x, 4);\nDep d({g, Tile(x)}, {g, Tile(x)});"), {{{"Q", 1}}, false}),
             Catch::Contains("-D Q=1: the spec declares no parameter 'Q'"));
  CHECK_THAT(modelErrors(parseOrFail("")), Catch::Contains("the spec declares no dependency"));
}

// Issue 16: `Range(4*x, 4*x + 4)` was refused ("a range bound cannot depend on dimension 'x'"), though it is affine.
// Range bounds read the consumer's binding of the dimensions, also of the one the ForAll rebinds.
TEST_CASE("range bounds may depend on the consumer's dimensions", "[model]") {
  auto model = modelOrFail(parseOrFail("Dim x, y;\nGrid g1(x, y, 16, 4);\nGrid g2(x, y, 4, 4);\n"
                                       "Dep d({g2, Tile(x, y)}, {g1, ForAll(Tile(x, y), x, Range(4*x, 4*x + 4))});"));
  isl::map expected(model.ctx(), "{ g2[x, y] -> g1[x', y] : 0 <= x < 4 and 0 <= y < 4 and 4x <= x' < 4x + 4 }");
  CHECK(model.dependency("d").producers[0].relation.is_equal(expected));
  // A range empty for some consumer tile is an error naming one.
  std::string empty = modelErrors(parseOrFail("Dim x, y;\nGrid g1(x, y, 16, 4);\nGrid g2(x, y, 4, 4);\n"
                                              "Dep d({g2, Tile(x, y)}, {g1, ForAll(Tile(x, y), x, Range(4*x, 6 - x))});"));
  CHECK_THAT(empty, Catch::Contains("test.dep:4:52: error: Range(4*x, 6 - x) over 'x' is empty"));
  CHECK_THAT(empty, Catch::Contains("note: for consumer tile g2[2, 0]"));
  // The other dimension too: a consumer row reads the producer rows up to its own.
  auto triangle = modelOrFail(parseOrFail("Dim x, y;\nGrid g1(x, y, 4, 4);\nGrid g2(x, y, 4, 4);\n"
                                          "Dep d({g2, Tile(x, y)}, {g1, ForAll(Tile(x, y), y, Range(0, y + 1))});"));
  isl::map lower(triangle.ctx(), "{ g2[x, y] -> g1[x, y'] : 0 <= x < 4 and 0 <= y < 4 and 0 <= y' <= y }");
  CHECK(triangle.dependency("d").producers[0].relation.is_equal(lower));
}

// Issue 16: `B*S` with both symbolic (as the paper's attention spec writes it) was refused. It is taken by cases
// over the factor with few values: a fresh parameter B*S, exactly constrained to B times S.
TEST_CASE("a product of two symbolic parameters is a fresh parameter, exactly constrained", "[model]") {
  std::string spec = "Symbolic B = 2, S = 4;\nWhere(B >= 1, B <= 4, S >= 1, S <= 64);\nDim x, y;\n"
                     "Grid g1(x, y, 4, B*S);\nGrid g2(x, y, 2, B*S);\n"
                     "Dep d({g2, Tile(x, y)}, {g1, ForAll(Tile(x, y), x, Range(g1.x))});";
  auto model = modelOrFail(parseOrFail(spec));
  CHECK(model.symbolicParameters() == std::vector<std::string>{"B", "S", "B*S"});
  CHECK(model.parameterValues().at("B*S") == 8);
  // Exact: every admissible (B, S, B*S) has B*S == B * S, and every B * S is admissible.
  isl::set context = model.context();
  for (int b = 1; b <= 4; ++b)
    for (int s : {1, 7, 64}) {
      INFO("B = " << b << ", S = " << s);
      CHECK_FALSE(analysis::fixParameters(context, {{"B", b}, {"S", s}, {"B*S", b * s}}).is_empty());
      CHECK(analysis::fixParameters(context, {{"B", b}, {"S", s}, {"B*S", b * s + 1}}).is_empty());
    }
  // A read past the product's rows is found with consistent values.
  std::string past = spec;
  past.replace(past.find("Range(g1.x))"), 12, "Range(g1.x)), Tile(x, y + 1)");
  auto shifted = modelOrFail(parseOrFail(past));
  dsl::Diagnostics diagnostics;
  auto violations = analysis::checkBounds(shifted, diagnostics);
  REQUIRE(violations.size() == 1);
  const auto& values = violations[0].parameters;
  CHECK(values.at("B*S") == values.at("B") * values.at("S"));
}

TEST_CASE("a product of two symbolic parameters with many values each is refused, saying why", "[model][errors]") {
  std::string errors = modelErrors(parseOrFail("Symbolic B = 2, S = 4;\nWhere(B >= 1, B <= 100, S >= 1, S <= 100);\n"
                                               "Dim x;\nGrid g1(x, B*S);\nGrid g2(x, 4);\nDep d({g2, Tile(x)}, {g1, Tile(x)});"));
  CHECK_THAT(errors, Catch::Contains("test.dep:4:13: error: extent of grid 'g1' is not affine: 'B*S' multiplies two "
                                     "symbolic values; isl takes a product of two symbolic values by cases over a "
                                     "factor with at most 64 values under the constraints, and here B in [1, 100] and "
                                     "S in [1, 100]"));
}
