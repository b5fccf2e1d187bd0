// The emitted header: names, contents, determinism, W/T constants, summaries.
#include "model_fixture.h"
#include "spec_builder.h"

#include <cusync/codegen/header_emitter.h>
#include <cusync/codegen/summary.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace cusync;
using namespace cusync::policytest;
using Catch::Matchers::Contains;

TEST_CASE("The MLP header has the policy, order and optimization structs the kernels use", "[emitter]") {
  Models models = buildModels(mlpSpec());
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  std::string header = codegen::emitHeader(generation, "mlp.dep");
  CHECK(codegen::headerFileName(generation) == "mlp.h");
  CHECK_THAT(header, Contains("#include \"cusync/tile.h\""));
  CHECK_THAT(header, Contains("namespace cusync::generated::mlp {"));
  CHECK_THAT(header, Contains("struct Dep_dep_g1_TileSync {"));
  CHECK_THAT(header, Contains("struct Dep_dep_g1_RowSync {"));
  CHECK_THAT(header, Contains("struct Order_g1_RowMajor {"));
  CHECK_THAT(header, Contains("struct Order_g2_RowMajor {"));
  CHECK_THAT(header, Contains("struct Optimizations_dep {"));
  CHECK_THAT(header, Contains("#define CUSYNC_MLP_POLICIES(X)"));
  // RowSync reads its extents from the GridShape, so the header serves every batch size.
  CHECK_THAT(header, Contains("return grid.x;"));
  CHECK_THAT(header, Contains("return tile.y;"));
  // B is symbolic, so it is not a constant; concrete parameters are.
  CHECK_THAT(header, Contains("// B: symbolic (example value 4)"));
  CHECK_THAT(header, Contains("inline constexpr std::int64_t H = 12288;"));
  CHECK_THAT(header, Contains("Proven with isl symbolically"));
}

TEST_CASE("Generated headers are deterministic", "[emitter]") {
  for (const spec::Spec& spec : {mlpSpec(), attentionSpec()}) {
    Models first = buildModels(spec), second = buildModels(spec);
    std::string a = codegen::emitHeader(codegen::generate(first.proofModels(), {}), "");
    std::string b = codegen::emitHeader(codegen::generate(second.proofModels(), {}), "");
    CHECK(a == b);
    CHECK(codegen::jsonSummary(codegen::generate(first.proofModels(), {})) ==
          codegen::jsonSummary(codegen::generate(second.proofModels(), {})));
  }
}

TEST_CASE("W/T: small grids avoid the wait-kernel, large ones need it", "[optimizations]") {
  // MLP at B = 4: g1 = 24 x 4, g2 = 48 x 4 tiles: 288 tiles.
  Models models = buildModels(mlpSpec());
  codegen::Generation defaults = codegen::generate(models.proofModels(), {});
  REQUIRE(defaults.optimizations.size() == 1);
  const codegen::StageOptimization& stage = defaults.optimizations.front();
  CHECK(stage.totalTiles == 24 * 4 + 48 * 4);
  CHECK_FALSE(stage.avoidWaitKernel);   // 288 > 132
  CHECK_FALSE(stage.avoidCustomOrder);  // 288 > 264
  // The symbolic ranges: 72 tiles per unit of B, so W holds for B = 1 and T for B <= 3.
  CHECK_THAT(stage.waitKernelAvoidableFor, Contains("B = 1"));
  CHECK_THAT(stage.customOrderAvoidableFor, Contains("B <= 3"));

  codegen::OptimizationOptions wide;
  wide.smCount = 132;
  wide.defaultOccupancy = 3;
  codegen::Generation occupancy3 = codegen::generate(models.proofModels(), wide);
  CHECK(occupancy3.optimizations.front().avoidWaitKernel);  // 288 <= 396

  codegen::OptimizationOptions oneGridSlow = wide;
  oneGridSlow.occupancy["g2"] = 1;  // the smaller occupancy decides
  CHECK_FALSE(codegen::generate(models.proofModels(), oneGridSlow).optimizations.front().avoidWaitKernel);

  std::string header = codegen::emitHeader(defaults, "");
  CHECK_THAT(header, Contains("static constexpr bool avoidWaitKernel = false;"));
  CHECK_THAT(header, Contains("canAvoidWaitKernel(GridShape g2, GridShape g1)"));
}

TEST_CASE("A chain's W condition counts every stage the consumer transitively waits on", "[optimizations]") {
  Models models = buildModels(attentionSpec());
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  bool found = false;
  for (const auto& stage : generation.optimizations) {
    if (stage.dependency != "depT2") continue;
    found = true;
    CHECK(stage.grids == std::vector<std::string>{"g2", "g1", "gP", "gR", "gT"});
    // T is about overlapping a producer's last wave with its consumer's first: direct producers only.
    CHECK(stage.directGrids == std::vector<std::string>{"g2", "gT"});
    CHECK(stage.directTiles == 4 * 2 + 4 * 2);
    CHECK(stage.totalTiles == 8 + 24 + 8 + 4 + 8);
  }
  CHECK(found);
}

TEST_CASE("The JSON summary lists proofs and rejected candidates", "[emitter]") {
  Models models = buildModels(stridedSpec());
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  std::string json = codegen::jsonSummary(generation);
  CHECK_THAT(json, Contains("\"struct\": \"Dep_dep1P_g1_StridedSync\""));
  CHECK_THAT(json, Contains("\"scope\": \"symbolic\""));
  CHECK_THAT(json, Contains("\"exact\": false"));
  std::string text = codegen::textSummary(generation);
  CHECK_THAT(text, Contains("Dep_dep1P_g1_StridedSync: proven"));
}

// Issue 16: names that are fine in a spec but awkward in C++ (a spec file class.dep, grids named like the
// runtime's types or the Optimizations struct's members, a parameter named std) still give a header that compiles.
TEST_CASE("Header emitter: a spec named class and grids named GridShape, TileCoord and slots compile",
          "[emitter]") {
  SpecBuilder b("class");
  b.parameter("std", 4);
  b.grid("GridShape", {param("std"), num(3)}).grid("TileCoord", {param("std"), num(3)}).grid("slots", {num(2), num(3)});
  spec::Tile xy = tile({dim("x"), dim("y")});
  b.dependency("d1", "TileCoord", xy, {{"GridShape", {tiles(xy)}}});
  b.dependency("d2", "slots", xy, {{"TileCoord", {forAll(xy, "x", num(0), extentOf("TileCoord", 0))}}});
  Models models = buildModels(b.spec);
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  CHECK(codegen::headerFileName(generation) == "class.h");
  std::string header = codegen::emitHeader(generation, "");
  CHECK_THAT(header, Catch::Contains("namespace cusync::generated::class_ {"));
  std::filesystem::path directory = std::filesystem::path(CUSYNC_POLICY_SCRATCH_DIR) / "awkward_names";
  std::filesystem::create_directories(directory);
  std::ofstream(directory / "class.h") << header;
  std::ofstream(directory / "use.cpp") << "#include \"class.h\"\n"
                                       << "#define P(T, ...) static_assert(T::value({0, 0, 0}, {4, 3, 1}) >= 1);\n"
                                       << "CUSYNC_CLASS__POLICIES(P)\n"
                                       << "static_assert(!cusync::generated::class_::Optimizations_d2::"
                                       << "canAvoidWaitKernel({2, 3, 1}, {4, 3, 1}, {4, 3, 1}) || true);\n";
  std::string compile = std::string(CUSYNC_HOST_CXX) + " -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I" +
                        CUSYNC_RUNTIME_INCLUDE_DIR + " " + (directory / "use.cpp").string() + " 2> " +
                        (directory / "compile.log").string();
  int status = std::system(compile.c_str());
  std::ifstream log(directory / "compile.log");
  std::string errors((std::istreambuf_iterator<char>(log)), {});
  INFO(errors);
  CHECK(status == 0);
  std::filesystem::remove_all(directory);
}
