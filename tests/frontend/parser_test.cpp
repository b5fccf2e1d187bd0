// The .dep parser: the IR it builds for the paper's notation, C++-compatible constant folding, and the syntax and
// name errors it reports (with file:line:col).
#include "spec_test_support.h"

#include <cusync/dsl/parser.h>
#include <cusync/dsl/print.h>

#include <catch2/catch.hpp>

using namespace cusync;
using cusync::test::parseErrors;
using cusync::test::parseOrFail;

namespace {

spec::Expr constant(std::int64_t value) {
  spec::Expr e;
  e.value = value;
  return e;
}

}  // namespace

TEST_CASE("the GPT-3 MLP spec parses into the IR of the paper's Figure 5a", "[parser]") {
  dsl::Diagnostics diagnostics;
  dsl::SourceTexts sources;
  auto parsed = dsl::parseSpecFile(test::sourcePath("examples/mlp/gpt3_mlp.dep"), sources, diagnostics);
  INFO(dsl::render(diagnostics, sources));
  REQUIRE(parsed);
  const spec::Spec& spec = *parsed;
  CHECK(spec.name == "gpt3_mlp");
  REQUIRE(spec.parameters.size() == 4);
  CHECK(spec.parameters[0].name == "H");
  CHECK(spec.parameters[0].defaultValue == 12288);
  CHECK_FALSE(spec.parameters[0].symbolic);
  CHECK(spec.parameters[3].name == "M");
  CHECK(spec.parameters[3].symbolic);
  REQUIRE(spec.parameters[3].constraints.size() == 2);
  CHECK(dsl::toString(spec.parameters[3].constraints[0]) == "M >= 1");
  CHECK(dsl::toString(spec.parameters[3].constraints[1]) == "M <= 4096");

  REQUIRE(spec.dimensions.size() == 2);
  CHECK(spec.dimensions[0].name == "x");
  CHECK(spec.dimensions[1].name == "y");

  REQUIRE(spec.grids.size() == 2);
  CHECK(spec.grids[0].name == "g1");
  CHECK(spec.grids[0].dimensions == std::vector<std::string>{"x", "y"});
  CHECK(dsl::toString(spec.grids[0].extents[0]) == "4*H/(8*TileN)");
  CHECK(dsl::toString(spec.grids[0].extents[1]) == "(M + TileM - 1)/TileM");
  CHECK(spec.grids[0].location.line == 14);
  CHECK(spec.grids[0].location.column == 6);

  REQUIRE(spec.dependencies.size() == 1);
  const auto& dep = spec.dependencies[0];
  CHECK(dep.name == "dep");
  CHECK(dep.consumerGrid == "g2");
  CHECK(dsl::toString(dep.consumerTile) == "Tile(x, y)");
  REQUIRE(dep.producers.size() == 1);
  CHECK(dep.producers[0].grid == "g1");
  REQUIRE(dep.producers[0].tiles.size() == 1);
  const auto& prodCols = dep.producers[0].tiles[0];
  CHECK(dsl::toString(prodCols) == "ForAll(Tile(x, y), x, Range(g1.x))");
  REQUIRE(prodCols.ranges.size() == 1);
  CHECK(prodCols.ranges[0].range.lower == constant(0));
  CHECK(prodCols.ranges[0].range.upper.kind == spec::Expr::Kind::GridExtent);
  CHECK(prodCols.ranges[0].range.upper.name == "g1");
  CHECK(prodCols.ranges[0].range.upper.dimensionIndex == 0);
}

TEST_CASE("every bundled spec parses", "[parser]") {
  for (const char* file : {"examples/mlp/gpt3_mlp.dep", "examples/mlp/llama_mlp.dep",
                           "examples/attention/attention.dep", "examples/conv2d/conv2d.dep",
                           "examples/conv2d/conv2d_3x3.dep", "examples/conv2d/conv2d_bottleneck.dep",
                           "examples/conv2d/conv2d_stride2.dep"}) {
    INFO(file);
    test::parseOrFail(test::readFile(test::sourcePath(file)), file);
  }
}

TEST_CASE("attention: strided tiles, nested ForAll and two producers", "[parser]") {
  spec::Spec spec = parseOrFail(test::readFile(test::sourcePath("examples/attention/attention.dep")));
  REQUIRE(spec.dependencies.size() == 4);
  const auto& strided = spec.dependencies[0];
  REQUIRE(strided.producers[0].tiles.size() == 2);
  CHECK(dsl::toString(strided.producers[0].tiles[1]) == "Tile(x + H/(8*TileN), y)");
  const auto& twoProducers = spec.dependencies[2];
  REQUIRE(twoProducers.producers.size() == 2);
  CHECK(twoProducers.producers[0].grid == "gR");
  CHECK(twoProducers.producers[1].grid == "g1");
  CHECK(dsl::toString(twoProducers.producers[0].tiles[0]) == "Tile(x, 0)");
}

TEST_CASE("conv2d: the x*s tile", "[parser]") {
  spec::Spec spec = parseOrFail(test::readFile(test::sourcePath("examples/conv2d/conv2d.dep")));
  const auto& tile = spec.dependencies.at(0).producers.at(0).tiles.at(0).tile;
  REQUIRE(tile.coordinates[0].kind == spec::Expr::Kind::Mul);
  CHECK(dsl::toString(tile) == "Tile(x*s, y)");
}

TEST_CASE("min and max take two expressions and are not folded", "[parser]") {
  spec::Spec spec = parseOrFail(
      "Param Q = 56; Dim x, y; Grid g(x, y, 2, 49); Grid c(x, y, 2, 49);\n"
      "ForAll halo(Tile(x, y), y, Range(max(0, y - 1)/2, 1 + min(g.y, min(y + 2, 3*Q))));\n"
      "Dep d({c, Tile(x, y)}, {g, halo});");
  const spec::Range& range = spec.dependencies.at(0).producers.at(0).tiles.at(0).ranges.at(0).range;
  REQUIRE(range.lower.kind == spec::Expr::Kind::FloorDiv);  // max(...) is a primary: it binds before '/'
  const spec::Expr& clipped = range.lower.operands.at(0);
  REQUIRE(clipped.kind == spec::Expr::Kind::Max);
  REQUIRE(clipped.operands.size() == 2);
  CHECK(clipped.operands[0].kind == spec::Expr::Kind::Constant);
  CHECK(clipped.operands[0].value == 0);
  CHECK(clipped.operands[1].kind == spec::Expr::Kind::Sub);
  CHECK(clipped.location.line == 2);
  CHECK(clipped.location.column == 34);
  CHECK(range.upper.operands.at(1).kind == spec::Expr::Kind::Min);
  CHECK(dsl::toString(range) == "Range(max(0, y - 1)/2, 1 + min(g.y, min(y + 2, 3*Q)))");
}

TEST_CASE("malformed min and max are errors at their location", "[parser][errors]") {
  const std::string prefix = "Dim x, y; Grid g(x, y, 2, 49);\n";
  CHECK_THAT(parseErrors(prefix + "ForAll f(Tile(x, y), y, Range(max(0), y));"),
             Catch::Contains("test.dep:2:31: error: max(a, b) takes two expressions, found 1"));
  CHECK_THAT(parseErrors(prefix + "ForAll f(Tile(x, y), y, Range(min(), y));"),
             Catch::Contains("test.dep:2:31: error: min(a, b) takes two expressions, found 0"));
  CHECK_THAT(parseErrors(prefix + "ForAll f(Tile(x, y), y, Range(min(0, y, g.y), y));"),
             Catch::Contains("test.dep:2:41: error: min(a, b) takes two expressions; nest it for more: "
                             "min(a, min(b, c))"));
  CHECK_THAT(parseErrors(prefix + "ForAll f(Tile(x, y), y, Range(min + 1, y));"),
             Catch::Contains("test.dep:2:35: error: expected '(' after 'min' (min(a, b) takes two expressions)"));
  CHECK_THAT(parseErrors(prefix + "ForAll f(Tile(x, y), y, Range(max(0, y - 1, y));"),
             Catch::Contains("test.dep:2:45: error: max(a, b) takes two expressions; nest it"));
  // They are words of the notation: in the C++ reading a declaration named min would hide the function.
  CHECK_THAT(parseErrors("Param min = 4;"),
             Catch::Contains("test.dep:1:7: error: 'min' is a word of the notation and cannot name a parameter"));
  CHECK_THAT(parseErrors("Dim x, max;"), Catch::Contains("'max' is a word of the notation and cannot name"));
  // Not folded, so not a constant: `Param Z = max(1, 2);` does not compile as C++ either.
  CHECK_THAT(parseErrors("Param Z = max(1, 2);"),
             Catch::Contains("the value of parameter 'Z' must be an integer constant"));
}

TEST_CASE("nested ForAll records ranges innermost first", "[parser]") {
  spec::Spec spec = parseOrFail(
      "Dim x, y; Grid g(x, y, 4, 4); Grid c(x, y, 1, 1);\n"
      "ForAll all(ForAll(Tile(x, y), x, Range(g.x)), y, Range(1, g.y));\n"
      "Dep d({c, Tile(x, y)}, {g, all});");
  const auto& set = spec.dependencies[0].producers[0].tiles[0];
  REQUIRE(set.ranges.size() == 2);
  CHECK(set.ranges[0].dimension == "x");
  CHECK(set.ranges[1].dimension == "y");
  CHECK(set.ranges[1].range.lower.kind == spec::Expr::Kind::Constant);
  CHECK(set.ranges[1].range.lower.value == 1);
}

TEST_CASE("integer-only subexpressions fold as C++ folds them", "[parser]") {
  spec::Spec spec = parseOrFail(
      "Param A = 2*3 + 1, B = -7/2, C = -7 % 2, D = 3000000000 * 2;\n"
      "Param E = -(4);\n");
  CHECK(spec.parameters[0].defaultValue == 7);
  CHECK(spec.parameters[1].defaultValue == -3);  // truncation, not floor: C++ evaluates -7/2 to -3
  CHECK(spec.parameters[2].defaultValue == -1);
  CHECK(spec.parameters[3].defaultValue == 6000000000);  // a long literal makes the product long
  CHECK(spec.parameters[4].defaultValue == -4);

  spec::Spec withNames = parseOrFail("Param N = 4; Dim x; Grid g(x, 2*3*N); Dep d({g, Tile(x)}, {g, Tile(x)});");
  const auto& extent = withNames.grids[0].extents[0];
  REQUIRE(extent.kind == spec::Expr::Kind::Mul);
  CHECK(extent.operands[0].kind == spec::Expr::Kind::Constant);
  CHECK(extent.operands[0].value == 6);  // (2*3) folded, then times N
}

TEST_CASE("comments of both kinds are ignored", "[parser]") {
  spec::Spec spec = parseOrFail("/* block\n comment */ Dim x; // line comment\nGrid g(x, /* inline */ 4);\n"
                                "Dep d({g, Tile(x)}, {g, Tile(x)}); // end");
  CHECK(spec.grids.size() == 1);
}

TEST_CASE("syntax errors are reported at file:line:col with a caret", "[parser][errors]") {
  std::string errors = parseErrors("Dim x, y;\nGrid g1(x, y, 4, 4)\nDep d({g1, Tile(x, y)}, {g1, Tile(x, y)});\n");
  CHECK_THAT(errors, Catch::Contains("test.dep:3:1: error: expected ';' after the declaration, found identifier "
                                     "'Dep'"));
  CHECK_THAT(errors, Catch::Contains("\n  ^\n"));

  CHECK_THAT(parseErrors("Dim x;\nGrid g(x 4);"), Catch::Contains("test.dep:2:10: error: expected ')'"));
  CHECK_THAT(parseErrors("Dim x;\nfoo bar;"), Catch::Contains("2:1: error: unknown declaration 'foo'"));
  CHECK_THAT(parseErrors("Dim x;\nGrid g(x, 4);\nDep d({g, Tile(x)});"),
             Catch::Contains("needs at least one producer"));
  CHECK_THAT(parseErrors("Param H;"), Catch::Contains("expected '=' after parameter 'H'"));
  CHECK_THAT(parseErrors("Dim x; /* never closed"), Catch::Contains("1:8: error: unterminated /* comment"));
  CHECK_THAT(parseErrors("Dim x; Grid g(x, 4); Dep d({g, ForAll(Tile(x), x, Range(4))}, {g, Tile(x)});"),
             Catch::Contains("the consumer of a dependency is one tile, not a ForAll"));
  CHECK_THAT(parseErrors("Dim x; Grid g(x, 4); Tile t(x, x, x, x);"), Catch::Contains("at most 3 coordinates"));
  CHECK_THAT(parseErrors("Dim x, y; Grid g(x, y, 4);"),
             Catch::Contains("grid 'g' has 3 arguments; a grid takes 1 to 3 dimensions followed by one extent"));
  CHECK_THAT(parseErrors("Dim x; Grid g(4, x);"), Catch::Contains("argument 1 of grid 'g' must be a dimension"));
  CHECK_THAT(parseErrors("Dim x; Grid g(x, 4); Dep d({g, Tile(x)}, {g, ForAll(Tile(x), 4, Range(4))});"),
             Catch::Contains("expected identifier (the dimension the ForAll ranges over)"));
  CHECK_THAT(parseErrors("Symbolic B = 1; Where(B);"), Catch::Contains("expected a comparison"));
  CHECK_THAT(parseErrors("Param N = 1; Where(N >= 1);"),
             Catch::Contains("this constraint mentions no symbolic parameter"));
}

TEST_CASE("unknown names and names of the wrong kind are errors", "[parser][errors]") {
  CHECK_THAT(parseErrors("Dim x;\nGrid g(x, N);"), Catch::Contains("test.dep:2:11: error: unknown name 'N'"));
  CHECK_THAT(parseErrors("Dim x; Grid g(x, 4);\nDep d({g, Tile(x)}, {g3, Tile(x)});"),
             Catch::Contains("2:22: error: unknown name 'g3'"));
  CHECK_THAT(parseErrors("Param N = 4; Dim x; Grid g(x, 4);\nDep d({N, Tile(x)}, {g, Tile(x)});"),
             Catch::Contains("'N' is a parameter, but a grid is expected here"));
  CHECK_THAT(parseErrors("Dim x; Grid g(x, 4);\nGrid h(x, g);"),
             Catch::Contains("grid 'g' is not a number; its extents are g.x, g.y and g.z"));
  CHECK_THAT(parseErrors("Dim x; Grid g(x, 4);\nGrid h(x, g.w);"),
             Catch::Contains("a grid's extents are .x, .y and .z, not .w"));
  CHECK_THAT(parseErrors("Dim x; Tile t(x);\nGrid h(x, t);"), Catch::Contains("'t' is a tile, not an integer"));
  CHECK_THAT(parseErrors("Dim x; Grid g(x, 4);\nForAll f(Tile(x), g, Range(4));"),
             Catch::Contains("'g' is a grid, but a dimension (the ForAll's second argument) is expected here"));
}

TEST_CASE("redeclarations are errors that point at the previous declaration", "[parser][errors]") {
  std::string errors = parseErrors("Dim x, y;\nParam y = 3;");
  CHECK_THAT(errors, Catch::Contains("test.dep:2:7: error: redeclaration of 'y'"));
  CHECK_THAT(errors, Catch::Contains("note: previously declared as a dimension at test.dep:1:8"));
  CHECK_THAT(parseErrors("Dim x; Grid g(x, 4); Grid g(x, 5);"), Catch::Contains("redeclaration of 'g'"));
  CHECK_THAT(parseErrors("Dim Grid;"), Catch::Contains("'Grid' is a word of the notation and cannot name"));
}

TEST_CASE("literals the notation does not have are rejected", "[parser][errors]") {
  CHECK_THAT(parseErrors("Dim x; Grid g(x, 1.5);"),
             Catch::Contains("1:18: error: '1.5' is not an integer; extents, tiles and parameters are integers"));
  CHECK_THAT(parseErrors("Param H = 0x10;"), Catch::Contains("unsupported literal '0x10'"));
  CHECK_THAT(parseErrors("Param H = 010;"), Catch::Contains("leading zero"));
  CHECK_THAT(parseErrors("Param H = 99999999999999999999;"), Catch::Contains("does not fit in 64 bits"));
  CHECK_THAT(parseErrors("Param H = 100000 * 100000;"),
             Catch::Contains("integer overflow in constant expression: C++ computes it in 32-bit int"));
  CHECK_THAT(parseErrors("Param H = 4 / 0;"), Catch::Contains("1:13: error: division by zero in 4 / 0"));
  CHECK_THAT(parseErrors("Param H = 12 @ 3;"), Catch::Contains("1:14: error: unexpected '@' in spec"));
}

TEST_CASE("hostile input ends in errors, not crashes or hangs", "[parser][errors]") {
  std::string deep(100000, '(');
  CHECK_THAT(parseErrors("Param H = " + deep + "1;"), Catch::Contains("nested deeper than 200 levels"));
  std::string minus(100000, '-');
  CHECK_THAT(parseErrors("Param H = " + minus + "1;"), Catch::Contains("nested deeper than 200 levels"));
  std::string nul("Dim x;\0\0", 8);
  CHECK_THAT(parseErrors(nul), Catch::Contains("1:7: error: spec is not a text file (it contains a NUL byte)"));
  std::string stray(5000, '\x01');
  std::string errors = parseErrors(stray);
  CHECK_THAT(errors, Catch::Contains("too many errors; stopping after 20"));
  std::string huge(dsl::kMaxSpecFileBytes + 1, ' ');
  CHECK_THAT(parseErrors(huge), Catch::Contains("the limit is 1048576 bytes"));
}

// Issue 16: `Param int` produced a header that did not compile. Every declared name must be usable in C++.
TEST_CASE("C++ keywords and reserved identifiers cannot name declarations, at their location", "[parser][errors]") {
  CHECK_THAT(parseErrors("Param int = 4;"),
             Catch::Contains("test.dep:1:7: error: 'int' cannot name a parameter: it is a C++ keyword"));
  CHECK_THAT(parseErrors("Param A = 1;\nDim x, class;"),
             Catch::Contains("test.dep:2:8: error: 'class' cannot name a dimension: it is a C++ keyword"));
  CHECK_THAT(parseErrors("Dim x;\nGrid new(x, 4);"), Catch::Contains("'new' cannot name a grid"));
  CHECK_THAT(parseErrors("Dim x;\nGrid g(x, 4), h(x, 4);\nDep and({h, Tile(x)}, {g, Tile(x)});"),
             Catch::Contains("'and' cannot name a dependency: it is a C++ keyword"));
  CHECK_THAT(parseErrors("Symbolic __M = 4;"), Catch::Contains("C++ reserves it for the implementation"));
  CHECK_THAT(parseErrors("Param _Tile = 4;"), Catch::Contains("C++ reserves it for the implementation"));
  CHECK_THAT(parseErrors("Param CUSYNC_HOST_DEVICE = 4;"), Catch::Contains("the runtime's macros"));
  CHECK_THAT(parseErrors("Param int = 4;"), Catch::Contains("  Param int = 4;\n        ^\n"));
  // Near misses are fine.
  CHECK(parseErrors("Param int8 = 4, Class = 2, _m = 1;").empty());
}
