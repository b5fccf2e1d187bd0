// The bounds check R(Dom(C)) ⊆ Dom(P): accepted specs, and rejected ones with the first counterexample, for
// concrete and for symbolic parameters.
#include "spec_test_support.h"

#include <cusync/analysis/bounds_check.h>

#include <catch2/catch.hpp>

using namespace cusync;
using analysis::ConcreteTile;

namespace {

std::vector<analysis::BoundsViolation> check(const std::string& text, std::string* rendered = nullptr,
                                             analysis::ModelOptions options = {}) {
  auto model = test::modelOrFail(test::parseOrFail(text), std::move(options));
  dsl::Diagnostics diagnostics;
  auto violations = analysis::checkBounds(model, diagnostics);
  dsl::SourceTexts sources;
  sources.add("test.dep", text);
  if (rendered) *rendered = dsl::render(diagnostics, sources);
  CHECK(diagnostics.errorCount() == violations.size());
  return violations;
}

}  // namespace

TEST_CASE("the bundled specs are in bounds, symbolically and for bound values", "[bounds]") {
  for (const char* file : {"examples/mlp/gpt3_mlp.dep", "examples/mlp/llama_mlp.dep",
                           "examples/attention/attention.dep", "examples/conv2d/conv2d.dep",
                           "examples/conv2d/conv2d_3x3.dep", "examples/conv2d/conv2d_bottleneck.dep",
                           "examples/conv2d/conv2d_stride2.dep"}) {
    INFO(file);
    std::string text = test::readFile(test::sourcePath(file));
    for (bool bind : {false, true}) {
      analysis::ModelOptions options;
      options.bindSymbolicParameters = bind;
      CHECK(check(text, nullptr, options).empty());
    }
  }
}

TEST_CASE("an out-of-range ForAll is rejected with the first counterexample", "[bounds]") {
  std::string rendered;
  auto violations = check("Dim x, y;\nGrid g1(x, y, 4, 4);\nGrid g2(x, y, 4, 4);\n"
                          "Dep d({g2, Tile(x, y)}, {g1, ForAll(Tile(x + 1, y), x, Range(g1.x))});",
                          &rendered);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].dependency == "d");
  CHECK(violations[0].producerGrid == "g1");
  CHECK(violations[0].example.consumer == ConcreteTile{"g2", {0, 0}});
  CHECK(violations[0].example.producer == ConcreteTile{"g1", {4, 0}});
  CHECK(violations[0].parameters.empty());
  CHECK_THAT(rendered, Catch::Contains("test.dep:4:30: error: dependency 'd' reads tiles outside producer grid 'g1'"));
  CHECK_THAT(rendered, Catch::Contains("  Dep d({g2, Tile(x, y)}, {g1, ForAll(Tile(x + 1, y), x, Range(g1.x))});\n"
                                       "                               ^\n"));
  CHECK_THAT(rendered, Catch::Contains("note: consumer tile g2[0, 0] reads producer tile g1[4, 0], but g1 is 4 x 4 "
                                       "tiles (x in [0, 4), y in [0, 4))"));
}

TEST_CASE("the Conv2D x*s tile is out of bounds when the producer is not s times wider", "[bounds]") {
  auto violations = check("Param s = 2;\nDim x, y;\nGrid g1(x, y, 4, 8);\nGrid g2(x, y, 4, 8);\n"
                          "Dep d({g2, Tile(x, y)}, {g1, Tile(x*s, y)});");
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].example.consumer == ConcreteTile{"g2", {2, 0}});
  CHECK(violations[0].example.producer == ConcreteTile{"g1", {4, 0}});
}

TEST_CASE("only the offending tile set of a producer is reported", "[bounds]") {
  auto violations = check("Dim x, y;\nGrid g1(x, y, 4, 4);\nGrid g2(x, y, 2, 4);\n"
                          "Dep d({g2, Tile(x, y)}, {g1, Tile(x, y), Tile(x + 2, y), Tile(x + 3, y)});");
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].tileSetIndex == 2);
  CHECK(violations[0].example.producer == ConcreteTile{"g1", {4, 0}});
}

TEST_CASE("symbolic parameters: a violation for some admissible value is found with that value", "[bounds]") {
  std::string rendered;
  // In bounds at the example value M = 256, out of bounds from M = 640 on (g2 gets 5+ tiles, g1 has 4).
  std::string text = "Symbolic M = 256;\nWhere(M >= 128, M <= 1024);\nDim x;\nGrid g1(x, 4);\nGrid g2(x, M/128);\n"
                     "Dep d({g2, Tile(x)}, {g1, Tile(x)});";
  analysis::ModelOptions boundOptions;
  boundOptions.bindSymbolicParameters = true;
  CHECK(check(text, nullptr, boundOptions).empty());
  auto violations = check(text, &rendered);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].parameters == analysis::ParameterValues{{"M", 640}});
  CHECK(violations[0].example.consumer == ConcreteTile{"g2", {4}});
  CHECK(violations[0].example.producer == ConcreteTile{"g1", {4}});
  CHECK_THAT(rendered, Catch::Contains("note: with symbolic parameters M = 640"));
}

TEST_CASE("symbolic parameters: constraints that rule violations out are honoured", "[bounds]") {
  std::string text = "Symbolic M = 256;\nWhere(M >= 128, M <= 512);\nDim x;\nGrid g1(x, 4);\nGrid g2(x, M/128);\n"
                     "Dep d({g2, Tile(x)}, {g1, Tile(x)});";
  CHECK(check(text).empty());
  std::string shifted = "Symbolic B = 3;\nWhere(B >= 1, B <= 1000);\nDim x, y;\nGrid g1(x, y, 4, B + 1);\nGrid g2(x, y, 4, B);\n"
                        "Dep d({g2, Tile(x, y)}, {g1, Tile(x, y + 1)});";
  CHECK(check(shifted).empty());
  std::string tooFar = "Symbolic B = 3;\nWhere(B >= 1, B <= 1000);\nDim x, y;\nGrid g1(x, y, 4, B + 1);\nGrid g2(x, y, 4, B);\n"
                       "Dep d({g2, Tile(x, y)}, {g1, Tile(x, y + 2)});";
  auto violations = check(tooFar);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].parameters == analysis::ParameterValues{{"B", 1}});
  CHECK(violations[0].example.producer == ConcreteTile{"g1", {0, 2}});
}

TEST_CASE("negative producer coordinates are out of bounds too", "[bounds]") {
  auto violations = check("Dim x;\nGrid g(x, 4);\nGrid h(x, 4);\nDep d({h, Tile(x)}, {g, Tile(x - 1)});");
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].example.consumer == ConcreteTile{"h", {0}});
  CHECK(violations[0].example.producer == ConcreteTile{"g", {-1}});
}

TEST_CASE("a dimension the consumer tile does not bind makes the read unbounded", "[bounds]") {
  auto violations = check("Dim x, y;\nGrid g1(x, y, 4, 4);\nGrid g2(x, 4);\nDep d({g2, Tile(x)}, {g1, Tile(x, y)});");
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].example.consumer.grid == "g2");
}

// A halo range needs clipping at both ends of the producer grid: without max(0, ...) the first consumer tile reads
// tile -1, without min(g1.y, ...) the last one reads a tile past the grid, for some admissible B.
TEST_CASE("a halo Range is in bounds only when clipped with max and min, for every B", "[bounds]") {
  const std::string grids = "Symbolic B = 4;\nWhere(B >= 1, B <= 32);\nDim x, y;\n"
                            "Grid g1(x, y, 2, 3*B);\nGrid g2(x, y, 2, 3*B);\n";
  CHECK(check(grids + "Dep d({g2, Tile(x, y)}, {g1, ForAll(ForAll(Tile(x, y), x, Range(g1.x)), y, "
                      "Range(max(0, y - 1), min(g1.y, y + 2)))});")
            .empty());

  std::string rendered;
  auto below = check(grids + "Dep d({g2, Tile(x, y)}, {g1, ForAll(ForAll(Tile(x, y), x, Range(g1.x)), y, "
                             "Range(y - 1, min(g1.y, y + 2)))});",
                     &rendered);
  REQUIRE(below.size() == 1);
  CHECK(below[0].example.consumer.coordinates.at(1) == 0);
  CHECK(below[0].example.producer.coordinates.at(1) == -1);
  CHECK_THAT(rendered, Catch::Contains("test.dep:6:30: error: dependency 'd' reads tiles outside producer grid"));

  auto above = check(grids + "Dep d({g2, Tile(x, y)}, {g1, ForAll(ForAll(Tile(x, y), x, Range(g1.x)), y, "
                             "Range(max(0, y - 1), y + 2))});");
  REQUIRE(above.size() == 1);
  REQUIRE(above[0].parameters.count("B") == 1);
  std::int64_t b = above[0].parameters.at("B");
  CHECK(above[0].example.consumer.coordinates.at(1) == 3 * b - 1);  // the last tile, at the B the check chose
  CHECK(above[0].example.producer.coordinates.at(1) == 3 * b);
}
