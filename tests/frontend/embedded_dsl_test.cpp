// The embedded C++ DSL records the same IR as the .dep parser: each bundled .dep file is #included as C++ inside a
// function and the recorded spec is compared with the parsed one.
//
// Equality, precisely: after clearing the source locations of anonymous parts (expressions, tiles, tile sets,
// ranges, constraints, producer lists, which the C++ side cannot locate token by token), the two Specs are equal
// with spec::Spec's operator== -- every name, value, expression tree, ordering, and the exact file:line:col of every
// named declaration (parameters, dimensions, grids, dependencies), which the embedded DSL recovers from the source.
#include "spec_test_support.h"

#include <cusync/dsl/dsl.h>
#include <cusync/dsl/parser.h>
#include <cusync/dsl/print.h>

#include <catch2/catch.hpp>

using namespace cusync;

namespace {

spec::Spec recordGpt3Mlp() {
  dsl::SpecRecorder recorder("gpt3_mlp");
  {
    using namespace cusync::dsl;
#include "examples/mlp/gpt3_mlp.dep"
  }
  INFO(dsl::render(recorder.diagnostics(), dsl::SourceTexts{}));
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  return recorder.spec();
}

spec::Spec recordLlamaMlpFused() {
  dsl::SpecRecorder recorder("llama_mlp_fused");
  {
    using namespace cusync::dsl;
#include "examples/mlp/llama_mlp_fused.dep"
  }
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  return recorder.spec();
}

spec::Spec recordGpt3MlpFused() {
  dsl::SpecRecorder recorder("gpt3_mlp_fused");
  {
    using namespace cusync::dsl;
#include "examples/mlp/gpt3_mlp_fused.dep"
  }
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  return recorder.spec();
}

spec::Spec recordLlamaMlp() {
  dsl::SpecRecorder recorder("llama_mlp");
  {
    using namespace cusync::dsl;
#include "examples/mlp/llama_mlp.dep"
  }
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  return recorder.spec();
}

spec::Spec recordAttention() {
  dsl::SpecRecorder recorder("attention");
  {
    using namespace cusync::dsl;
#include "examples/attention/attention.dep"
  }
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  return recorder.spec();
}

spec::Spec recordAttentionDecode() {
  dsl::SpecRecorder recorder("attention_decode");
  {
    using namespace cusync::dsl;
#include "examples/attention/attention_decode.dep"
  }
  INFO(dsl::render(recorder.diagnostics(), dsl::SourceTexts{}));
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  return recorder.spec();
}

spec::Spec recordAttentionPrompt() {
  dsl::SpecRecorder recorder("attention_prompt");
  {
    using namespace cusync::dsl;
#include "examples/attention/attention_prompt.dep"
  }
  INFO(dsl::render(recorder.diagnostics(), dsl::SourceTexts{}));
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  return recorder.spec();
}

spec::Spec recordConv2d() {
  dsl::SpecRecorder recorder("conv2d");
  {
    using namespace cusync::dsl;
#include "examples/conv2d/conv2d.dep"
  }
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  return recorder.spec();
}

// The convolution specs use min and max in Range bounds: in C++ they are cusync::dsl::min / max on Terms.
spec::Spec recordConv2d3x3() {
  dsl::SpecRecorder recorder("conv2d_3x3");
  {
    using namespace cusync::dsl;
#include "examples/conv2d/conv2d_3x3.dep"
  }
  INFO(dsl::render(recorder.diagnostics(), dsl::SourceTexts{}));
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  return recorder.spec();
}

spec::Spec recordConv2dBottleneck() {
  dsl::SpecRecorder recorder("conv2d_bottleneck");
  {
    using namespace cusync::dsl;
#include "examples/conv2d/conv2d_bottleneck.dep"
  }
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  return recorder.spec();
}

spec::Spec recordConv2dStride2() {
  dsl::SpecRecorder recorder("conv2d_stride2");
  {
    using namespace cusync::dsl;
#include "examples/conv2d/conv2d_stride2.dep"
  }
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  return recorder.spec();
}

// The parser reads the file under the same path the compiler recorded for the #include.
spec::Spec parseBundled(const std::string& relative) {
  dsl::Diagnostics diagnostics;
  dsl::SourceTexts sources;
  auto spec = dsl::parseSpecFile(test::sourcePath(relative), sources, diagnostics);
  INFO(dsl::render(diagnostics, sources));
  REQUIRE(spec);
  return *spec;
}

void requireSameIr(spec::Spec recorded, spec::Spec parsed) {
  test::clearAnonymousLocations(recorded);
  test::clearAnonymousLocations(parsed);
  // Field by field first, so a mismatch says where.
  REQUIRE(recorded.name == parsed.name);
  REQUIRE(recorded.parameters.size() == parsed.parameters.size());
  for (std::size_t i = 0; i < parsed.parameters.size(); ++i) {
    INFO("parameter " << parsed.parameters[i].name);
    CHECK(recorded.parameters[i] == parsed.parameters[i]);
  }
  REQUIRE(recorded.dimensions == parsed.dimensions);
  REQUIRE(recorded.grids.size() == parsed.grids.size());
  for (std::size_t i = 0; i < parsed.grids.size(); ++i) {
    INFO("grid " << parsed.grids[i].name);
    CHECK(recorded.grids[i] == parsed.grids[i]);
  }
  REQUIRE(recorded.dependencies.size() == parsed.dependencies.size());
  for (std::size_t i = 0; i < parsed.dependencies.size(); ++i) {
    INFO("dependency " << parsed.dependencies[i].name);
    CHECK(recorded.dependencies[i] == parsed.dependencies[i]);
  }
  CHECK(recorded == parsed);
}

}  // namespace

TEST_CASE("gpt3_mlp.dep compiled as C++ records the parser's IR", "[embedded]") {
  spec::Spec recorded = recordGpt3Mlp();
  spec::Spec parsed = parseBundled("examples/mlp/gpt3_mlp.dep");
  // Named declarations carry the parser's exact locations (recovered from the file), not the compiler's.
  CHECK(recorded.grids.at(0).location == parsed.grids.at(0).location);
  CHECK(recorded.grids.at(0).location.line == 14);
  requireSameIr(recorded, parsed);
}

TEST_CASE("gpt3_mlp_fused.dep (3-D consumer grid, k-range Range bounds) compiled as C++ records the parser's IR",
          "[embedded]") {
  requireSameIr(recordGpt3MlpFused(), parseBundled("examples/mlp/gpt3_mlp_fused.dep"));
}

TEST_CASE("llama_mlp_fused.dep compiled as C++ records the parser's IR", "[embedded]") {
  requireSameIr(recordLlamaMlpFused(), parseBundled("examples/mlp/llama_mlp_fused.dep"));
}

TEST_CASE("llama_mlp.dep compiled as C++ records the parser's IR", "[embedded]") {
  requireSameIr(recordLlamaMlp(), parseBundled("examples/mlp/llama_mlp.dep"));
}

TEST_CASE("attention.dep compiled as C++ records the parser's IR", "[embedded]") {
  requireSameIr(recordAttention(), parseBundled("examples/attention/attention.dep"));
}

TEST_CASE("attention_decode.dep and attention_prompt.dep compiled as C++ record the parser's IR", "[embedded]") {
  requireSameIr(recordAttentionDecode(), parseBundled("examples/attention/attention_decode.dep"));
  requireSameIr(recordAttentionPrompt(), parseBundled("examples/attention/attention_prompt.dep"));
}

TEST_CASE("conv2d.dep compiled as C++ records the parser's IR", "[embedded]") {
  requireSameIr(recordConv2d(), parseBundled("examples/conv2d/conv2d.dep"));
}

TEST_CASE("the convolution specs (min, max and floor division in Range bounds) compiled as C++ record the parser's "
          "IR",
          "[embedded]") {
  spec::Spec recorded = recordConv2d3x3();
  // The clipped lower bound is max(...)/TileM: a Max node under the division, as the parser builds it.
  const spec::Range& halo = recorded.dependencies.at(0).producers.at(0).tiles.at(0).ranges.at(1).range;
  REQUIRE(halo.lower.kind == spec::Expr::Kind::FloorDiv);
  CHECK(halo.lower.operands.at(0).kind == spec::Expr::Kind::Max);
  CHECK(halo.upper.kind == spec::Expr::Kind::Min);
  requireSameIr(recorded, parseBundled("examples/conv2d/conv2d_3x3.dep"));
  requireSameIr(recordConv2dBottleneck(), parseBundled("examples/conv2d/conv2d_bottleneck.dep"));
  requireSameIr(recordConv2dStride2(), parseBundled("examples/conv2d/conv2d_stride2.dep"));
}

TEST_CASE("min and max of two integers build the expression the parser builds", "[embedded]") {
  dsl::SpecRecorder recorder("min_max");
  {
    using namespace cusync::dsl;
    Dim x;
    Grid g(x, max(2, 3) + min(4, 5));  // cusync::dsl::min/max: there is no other in scope
  }
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  const spec::Expr& extent = recorder.spec().grids.at(0).extents.at(0);
  REQUIRE(extent.kind == spec::Expr::Kind::Add);
  CHECK(extent.operands.at(0).kind == spec::Expr::Kind::Max);
  CHECK(dsl::toString(extent) == "max(2, 3) + min(4, 5)");
}

TEST_CASE("the comparison notices a difference in a single expression", "[embedded]") {
  spec::Spec recorded = recordGpt3Mlp();
  spec::Spec parsed = parseBundled("examples/mlp/gpt3_mlp.dep");
  test::clearAnonymousLocations(recorded);
  test::clearAnonymousLocations(parsed);
  REQUIRE(recorded == parsed);
  recorded.grids[0].extents[0].operands[0].operands[0].value = 5;  // 4*H -> 5*H
  CHECK_FALSE(recorded == parsed);
}

TEST_CASE("embedded declarations written directly in C++ record in order", "[embedded]") {
  dsl::SpecRecorder recorder("direct");
  {
    using namespace cusync::dsl;
    Param N = 8;
    Symbolic B = 2;
    Where(B >= 1);
    Dim x, y;
    Grid producer(x, y, N, B);
    Grid consumer(x, y, N / 2, B);
    Dep reads({consumer, Tile(x, y)}, {producer, Tile(2 * x, y), Tile(2 * x + 1, y)});
  }
  INFO(dsl::render(recorder.diagnostics(), dsl::SourceTexts{}));
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  const spec::Spec& spec = recorder.spec();
  REQUIRE(spec.parameters.size() == 2);
  CHECK(spec.parameters[0].name == "N");
  CHECK(spec.parameters[1].name == "B");
  CHECK(spec.parameters[1].symbolic);
  REQUIRE(spec.parameters[1].constraints.size() == 1);
  CHECK(dsl::toString(spec.parameters[1].constraints[0]) == "B >= 1");
  REQUIRE(spec.grids.size() == 2);
  CHECK(spec.grids[1].name == "consumer");
  CHECK(dsl::toString(spec.grids[1].extents[0]) == "N/2");
  REQUIRE(spec.dependencies.size() == 1);
  CHECK(spec.dependencies[0].name == "reads");
  CHECK(dsl::toString(spec.dependencies[0].producers[0].tiles[1]) == "Tile(2*x + 1, y)");
}

TEST_CASE("a constraint without a symbolic parameter is a recorded error", "[embedded]") {
  dsl::SpecRecorder recorder("bad");
  {
    using namespace cusync::dsl;
    Param N = 8;
    Where(N >= 1);
  }
  REQUIRE(recorder.diagnostics().hasErrors());
  CHECK_THAT(dsl::render(recorder.diagnostics(), dsl::SourceTexts{}),
             Catch::Contains("mentions no symbolic parameter"));
}

TEST_CASE("nested ForAll, 3-dimensional grids and multi-line declarations agree with the parser", "[embedded]") {
  // The same text once as C++ (below) and once through the parser; kept in one string for the parser.
  const std::string text =
      "Param K = 4;\n"
      "Dim x, y, z;\n"
      "Grid g1(x, y, z, 8, 4, K);\n"
      "Grid g2(x, y, z, 2, 4,\n"
      "        1);\n"
      "ForAll block(ForAll(Tile(4*x + x, y, z), x, Range(0, 1)), z, Range(g1.z));\n"
      "Dep d({g2, Tile(x, y, 0)},\n"
      "      {g1, block, Tile(x, y % 4, 0)});\n";
  dsl::SpecRecorder recorder("nested");
  {
    using namespace cusync::dsl;
    Param K = 4;
    Dim x, y, z;
    Grid g1(x, y, z, 8, 4, K);
    Grid g2(x, y, z, 2, 4,
            1);
    ForAll block(ForAll(Tile(4*x + x, y, z), x, Range(0, 1)), z, Range(g1.z));
    Dep d({g2, Tile(x, y, 0)},
          {g1, block, Tile(x, y % 4, 0)});
  }
  REQUIRE_FALSE(recorder.diagnostics().hasErrors());
  spec::Spec recorded = recorder.spec();
  spec::Spec parsed = test::parseOrFail(text, "nested.dep");
  // Different files: compare with all locations cleared (names, structure and values only).
  auto clearNamed = [](spec::Spec& s) {
    test::clearAnonymousLocations(s);
    for (auto& p : s.parameters) p.location = {};
    for (auto& d : s.dimensions) d.location = {};
    for (auto& g : s.grids) g.location = {};
    for (auto& d : s.dependencies) d.location = {};
  };
  clearNamed(recorded);
  clearNamed(parsed);
  parsed.name = recorded.name;
  CHECK(recorded == parsed);
  CHECK(recorded.dependencies.at(0).producers.at(0).tiles.at(0).ranges.size() == 2);
}
