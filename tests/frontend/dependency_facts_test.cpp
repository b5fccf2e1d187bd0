// Dependency facts: producer tiles per consumer tile (total, along each dimension, formula) and ranged dimensions.
#include "spec_test_support.h"

#include <cusync/analysis/dependency_facts.h>

#include <catch2/catch.hpp>

#include <filesystem>

using namespace cusync;

namespace {

std::vector<analysis::DependencyFacts> factsOf(const std::string& text, analysis::ParameterValues overrides = {}) {
  analysis::ModelOptions options;
  options.overrides = std::move(overrides);
  options.bindSymbolicParameters = true;
  auto model = test::modelOrFail(test::parseOrFail(text), options);
  return analysis::computeDependencyFacts(model);
}

std::string bundled(const std::string& relative) { return test::readFile(test::sourcePath(relative)); }

}  // namespace

TEST_CASE("MLP: one consumer tile reads one whole row of g1.x producer tiles", "[facts]") {
  auto facts = factsOf(bundled("examples/mlp/gpt3_mlp.dep"));
  REQUIRE(facts.size() == 1);
  CHECK(facts[0].consumerTiles == 96 * 8);
  const auto& producer = facts[0].producers.at(0);
  CHECK(producer.grid == "g1");
  CHECK(producer.uniform());
  CHECK(producer.maxTilesPerConsumer == 48);
  CHECK(producer.maxTilesAlong == std::vector<std::int64_t>{48, 1});
  CHECK(producer.minTilesAlong == std::vector<std::int64_t>{48, 1});
  CHECK(producer.tilesPerConsumerFormula == "g1.x");
  REQUIRE(producer.tileSets.size() == 1);
  REQUIRE(producer.tileSets[0].ranged.size() == 1);
  const auto& ranged = producer.tileSets[0].ranged[0];
  CHECK(ranged.dimension == "x");
  CHECK(ranged.lower == 0);
  CHECK(ranged.upper == 48);
  CHECK(ranged.producerDimensions == std::vector<std::size_t>{0});
}

TEST_CASE("the count follows the parameters", "[facts]") {
  auto facts = factsOf(bundled("examples/mlp/gpt3_mlp.dep"), {{"TileN", 256}});
  CHECK(facts[0].producers[0].maxTilesPerConsumer == 24);
}

TEST_CASE("attention: strided pair, column reduction, two producers", "[facts]") {
  auto facts = factsOf(bundled("examples/attention/attention.dep"));
  REQUIRE(facts.size() == 4);
  const auto& strided = facts[0].producers.at(0);
  CHECK(strided.maxTilesPerConsumer == 2);
  CHECK(strided.uniform());
  CHECK(strided.maxTilesAlong == std::vector<std::int64_t>{2, 1});
  CHECK(strided.tilesPerConsumerFormula == "2");
  const auto& column = facts[1].producers.at(0);
  CHECK(column.maxTilesPerConsumer == 8);  // B*S/TileM at B = 2
  CHECK(column.maxTilesAlong == std::vector<std::int64_t>{1, 8});
  CHECK(column.tileSets[0].ranged[0].producerDimensions == std::vector<std::size_t>{1});
  REQUIRE(facts[2].producers.size() == 2);
  CHECK(facts[2].producers[0].maxTilesPerConsumer == 1);
  CHECK(facts[2].producers[1].maxTilesPerConsumer == 1);
}

TEST_CASE("overlapping tile sets count distinct tiles and drop the formula", "[facts]") {
  auto facts = factsOf("Dim x;\nGrid g1(x, 4);\nGrid g2(x, 4);\nDep d({g2, Tile(x)}, {g1, Tile(x), Tile(x)});");
  const auto& producer = facts[0].producers[0];
  CHECK(producer.maxTilesPerConsumer == 1);
  CHECK(producer.tilesPerConsumerFormula.empty());
}

TEST_CASE("a count that depends on the consumer tile is reported as a range", "[facts]") {
  auto facts = factsOf("Dim x;\nGrid g1(x, 4);\nGrid g2(x, 4);\nDep d({g2, Tile(x)}, {g1, Tile(x), Tile(0)});");
  const auto& producer = facts[0].producers[0];
  CHECK(producer.minTilesPerConsumer == 1);  // consumer 0 reads g1[0] once
  CHECK(producer.maxTilesPerConsumer == 2);
  CHECK_FALSE(producer.uniform());
  CHECK(producer.tilesPerConsumerFormula.empty());
}

TEST_CASE("facts need a parameter-free model", "[facts]") {
  auto model = test::modelOrFail(test::parseOrFail(bundled("examples/mlp/gpt3_mlp.dep")));
  CHECK_THROWS_AS(analysis::computeDependencyFacts(model), std::invalid_argument);
}

// Issue 16: "more than 2000000 tile pairs" stopped generation for GPT-3 at M = 65536, though no header depends on
// these statistics. Past the limit they are skipped with a note, and generation goes on.
namespace {

std::string gpt3UpToM65536() {
  std::string text = bundled("examples/mlp/gpt3_mlp.dep");
  text.replace(text.find("M <= 4096"), 9, "M <= 65536");
  return text;
}

}  // namespace

TEST_CASE("facts: a relation past the enumeration limit is not counted, with a note, and does not throw",
          "[facts]") {
  auto facts = factsOf(gpt3UpToM65536(), {{"M", 65536}});
  REQUIRE(facts.size() == 1);
  const auto& producer = facts[0].producers.at(0);
  CHECK_FALSE(producer.counted);
  CHECK_THAT(producer.notCountedReason, Catch::Contains("not counted"));
  CHECK(producer.tilesPerConsumerFormula == "g1.x");
  CHECK(facts[0].consumerTiles == 96 * 512);
  // Below the limit everything is counted as before.
  CHECK(factsOf(gpt3UpToM65536(), {{"M", 1024}})[0].producers.at(0).counted);
}

TEST_CASE("facts: cusyncgen generates GPT-3 at M = 65536 and says the statistics were skipped", "[facts][cli]") {
  std::string path = test::writeTemporaryFile("gpt3_big.dep", gpt3UpToM65536());
  std::string out = path + ".out";
  auto result = test::runCusyncgen({path, "-D", "M=65536", "--check", "-o", out});
  INFO(result.err);
  CHECK(result.exitCode == 0);
  CHECK_THAT(result.out, Catch::Contains("per consumer tile: not counted: too many (consumer, producer) tile pairs"));
  CHECK_THAT(result.out, Catch::Contains("verdict: ok"));
  CHECK_THAT(test::readFile(out + "/gpt3_big.h"), Catch::Contains("struct Dep_dep_g1_RowSync {"));
  std::filesystem::remove_all(out);
}
