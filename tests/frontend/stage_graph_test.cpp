// Cycles in the stage graph deadlock at run time, so they are spec errors: a self-dependency (a wavefront within
// one grid), a two-grid cycle and a longer one, each reported at a dependency on the cycle with the cycle named,
// through the library and through cusyncgen (exit 1, caret line, no summary, no header).
#include "spec_test_support.h"

#include <cusync/analysis/stage_graph.h>

#include <catch2/catch.hpp>

#include <filesystem>

using namespace cusync;

namespace {

std::string stageGraphErrors(const std::string& text) {
  spec::Spec spec = test::parseOrFail(text);
  dsl::Diagnostics diagnostics;
  bool acyclic = analysis::checkStageGraph(spec, diagnostics);
  CHECK(acyclic == !diagnostics.hasErrors());
  dsl::SourceTexts sources;
  sources.add("test.dep", text);
  return dsl::render(diagnostics, sources);
}

const std::string kGrids = "Dim x, y;\nGrid g1(x, y, 4, 4);\nGrid g2(x, y, 4, 4);\nGrid g3(x, y, 4, 4);\n";

}  // namespace

TEST_CASE("stage graph: a self-dependency is refused as an intra-grid dependency, at its location", "[stage-graph]") {
  std::string errors = stageGraphErrors(kGrids + "Dep d({g1, Tile(x, y)}, {g1, Tile(x, y)});\n");
  CHECK_THAT(errors, Catch::Contains("test.dep:5:5: error: dependency 'd' makes tiles of grid 'g1' wait on tiles of "
                                     "'g1' itself: intra-grid dependencies (wavefronts) are not supported"));
  CHECK_THAT(errors, Catch::Contains("  Dep d({g1, Tile(x, y)}, {g1, Tile(x, y)});\n      ^\n"));
  CHECK_THAT(errors, Catch::Contains("cycle: g1 -> g1"));
}

TEST_CASE("stage graph: a wavefront reading only earlier tiles of its own grid is refused too", "[stage-graph]") {
  std::string errors = stageGraphErrors(kGrids + "Dep ok({g2, Tile(x, y)}, {g1, Tile(x, y)});\n"
                                                 "Dep wave({g2, Tile(x + 1, y)}, {g2, Tile(x, y)});\n");
  CHECK_THAT(errors, Catch::Contains("test.dep:6:5: error: dependency 'wave' makes tiles of grid 'g2' wait on tiles "
                                     "of 'g2' itself"));
  CHECK_THAT(errors, !Catch::Contains("'ok'"));
}

TEST_CASE("stage graph: a two-grid cycle is named, at the first dependency on it, with both edges", "[stage-graph]") {
  std::string errors = stageGraphErrors(kGrids + "Dep a({g2, Tile(x, y)}, {g1, Tile(x, y)});\n"
                                                 "Dep b({g1, Tile(x, y)}, {g2, Tile(x, y)});\n");
  CHECK_THAT(errors, Catch::Contains("test.dep:5:5: error: dependency cycle between grids: g2 -> g1 -> g2"));
  CHECK_THAT(errors, Catch::Contains("note: g2 waits on g1 through dependency 'a' at test.dep:5:5"));
  CHECK_THAT(errors, Catch::Contains("note: g1 waits on g2 through dependency 'b' at test.dep:6:5"));
}

TEST_CASE("stage graph: a three-grid cycle through a second producer is found and reported once", "[stage-graph]") {
  std::string errors =
      stageGraphErrors(kGrids + "Dep a({g2, Tile(x, y)}, {g1, Tile(x, y)});\n"
                                "Dep b({g3, Tile(x, y)}, {g1, Tile(x, 0)}, {g2, Tile(x, y)});\n"
                                "Dep c({g1, Tile(x, y)}, {g3, Tile(x, y)});\n");
  CHECK_THAT(errors, Catch::Contains("error: dependency cycle between grids: g2 -> g1 -> g3 -> g2"));
  CHECK(errors.find("error:") == errors.rfind("error:"));  // one strongly connected set, one error
}

TEST_CASE("stage graph: chains and diamonds are acyclic", "[stage-graph]") {
  CHECK(stageGraphErrors(kGrids + "Dep a({g2, Tile(x, y)}, {g1, Tile(x, y)});\n"
                                  "Dep b({g3, Tile(x, y)}, {g2, Tile(x, y)}, {g1, Tile(x, y)});\n")
            .empty());
}

TEST_CASE("stage graph: the isl model refuses a cyclic spec", "[stage-graph]") {
  spec::Spec spec = test::parseOrFail(kGrids + "Dep a({g2, Tile(x, y)}, {g1, Tile(x, y)});\n"
                                               "Dep b({g1, Tile(x, y)}, {g2, Tile(x, y)});\n");
  CHECK_THAT(test::modelErrors(spec), Catch::Contains("dependency cycle between grids"));
}

TEST_CASE("stage graph: cusyncgen rejects a self-dependency and a cycle with exit 1 and writes nothing",
          "[stage-graph][cli]") {
  for (const std::string& dependencies :
       {std::string("Dep d({g1, Tile(x, y)}, {g1, Tile(x, y)});\n"),
        std::string("Dep a({g2, Tile(x, y)}, {g1, Tile(x, y)});\nDep b({g1, Tile(x, y)}, {g2, Tile(x, y)});\n")}) {
    std::string path = test::writeTemporaryFile("cycle.dep", kGrids + dependencies);
    std::string out = std::filesystem::path(path).parent_path() / "cycle_out";
    auto result = test::runCusyncgen({path, "--check", "-o", out});
    INFO(result.out << result.err);
    CHECK(result.exitCode == 1);
    CHECK_THAT(result.err, Catch::Contains(path + ":5:5: error:"));
    CHECK_THAT(result.err, Catch::Contains("      ^\n"));
    CHECK_THAT(result.out, !Catch::Contains("verdict: ok"));
    CHECK_FALSE(std::filesystem::exists(std::filesystem::path(out) / "cycle.h"));
    std::filesystem::remove_all(out);
  }
}
