// The MLP examples' default-run decision (tuned_runs.h): the runs taken from the tuning table's entry, and the
// fallback to the exhaustive search when the table has no entry for this device and model or names a configuration
// this build lacks. Host logic, compiled by nvcc only because mlp_variants.h includes the GEMM registry; the tile
// configurations are names without kernels, and nothing runs on a GPU.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tuned_runs.h"

using namespace cusync::examples;

namespace {

const std::string kH100 = "NVIDIA H100 80GB HBM3";

TuningSetup setupWith(const std::string& entries) {
  TuningTableResult parsed = parseTuningTable(
      "{\"schema\": \"cusync-mlp-example-tuning/1\", \"entries\": [" + entries + "]}", "t.json");
  INFO(parsed.error);
  REQUIRE(parsed.table);
  TuningSetup setup;
  setup.search = false;
  setup.table = parsed.table;
  return setup;
}

std::string llamaEntry(int m, const std::string& config, const std::string& streamSyncConfig) {
  return "{\"device\": \"" + kH100 + "\", \"sms\": 132, \"model\": \"llama_mlp\", \"hidden\": 8192, "
         "\"intermediate\": 2752, \"m\": " + std::to_string(m) + ", \"variant\": \"RowSync+PDL\", \"config\": \"" +
         config + "\", \"split\": [3, 2], \"order\": \"col\", \"gate_up_order\": \"paired\", \"source\": \"s.csv\", "
         "\"stream_sync\": {\"config\": \"" + streamSyncConfig + "\", \"order\": \"g4\"}}";
}

std::vector<TileConfig> configsNamed(const std::vector<std::string>& names) {
  std::vector<TileConfig> configs;
  for (const auto& name : names) configs.push_back(TileConfig{name, {}, {}, false});
  return configs;
}

}  // namespace

TEST_CASE("tuned runs: StreamSync on the tuned kernels, StreamSync's own best, then the tuned variant",
          "[tuning]") {
  const TuningSetup setup = setupWith(llamaEntry(64, "64x64x64_s6_ws_b2_p", "128x256x64_s4_coop_b1"));
  const auto configs = configsNamed({"128x256x64_s4_coop_b1", "64x64x64_s6_ws_b2_p"});
  const auto runs = tunedRuns(setup, "test", kH100, 132, "llama_mlp", 8192, 2752, 100, configs);
  REQUIRE(runs);
  REQUIRE(runs->size() == 3);
  CHECK((*runs)[0].variant.name() == "StreamSync");
  CHECK((*runs)[0].config->name == "64x64x64_s6_ws_b2_p");
  CHECK((*runs)[0].kernels.pairedGateUp);
  CHECK((*runs)[0].kernels.producerParts == 3);
  CHECK((*runs)[1].variant.name() == "StreamSync");
  CHECK((*runs)[1].config->name == "128x256x64_s4_coop_b1");
  CHECK((*runs)[1].kernels.order == "g4");
  CHECK((*runs)[2].variant.name() == "RowSync+PDL");
  CHECK((*runs)[2].kernels.order == "col");
}

TEST_CASE("tuned runs: StreamSync's best is left out when it is the tuned kernels or not built", "[tuning]") {
  const auto configs = configsNamed({"64x64x64_s6_ws_b2_p"});
  const auto notBuilt = tunedRuns(setupWith(llamaEntry(64, "64x64x64_s6_ws_b2_p", "128x256x64_s4_coop_b1")),
                                  "test", kH100, 132, "llama_mlp", 8192, 2752, 64, configs);
  REQUIRE(notBuilt);
  CHECK(notBuilt->size() == 2);
}

TEST_CASE("no entry for this device, SM count or model: the exhaustive search", "[tuning]") {
  const TuningSetup setup = setupWith(llamaEntry(64, "64x64x64_s6_ws_b2_p", "64x64x64_s6_ws_b2_p"));
  const auto configs = configsNamed({"64x64x64_s6_ws_b2_p"});
  CHECK_FALSE(tunedRuns(setup, "test", "NVIDIA H200", 132, "llama_mlp", 8192, 2752, 64, configs));
  CHECK_FALSE(tunedRuns(setup, "test", kH100, 114, "llama_mlp", 8192, 2752, 64, configs));
  CHECK_FALSE(tunedRuns(setup, "test", kH100, 132, "gpt3_mlp", 12288, 6144, 64, configs));
  CHECK(tunedRuns(setup, "test", kH100, 132, "llama_mlp", 8192, 2752, 64, configs));
}

TEST_CASE("an entry whose tile configuration this build lacks: the exhaustive search", "[tuning]") {
  const TuningSetup setup = setupWith(llamaEntry(64, "64x64x64_s6_ws_b2_p_Rw", "64x64x64_s6_ws_b2_p"));
  CHECK_FALSE(tunedRuns(setup, "test", kH100, 132, "llama_mlp", 8192, 2752, 64, configsNamed({"64x64x64_s6_ws_b2_p"})));
}

TEST_CASE("--search and options that restrict the search do not read a table", "[tuning]") {
  MlpOptions options;
  options.program = "test";
  options.tuningTable = "/nonexistent/table.json";  // would be exit 2 if read
  options.search = true;
  CHECK(loadTuningSetup(options).search);
  options.search = false;
  options.searchRestricted = true;
  CHECK(loadTuningSetup(options).search);
  options.searchRestricted = false;
  options.baselinesOnly = true;
  CHECK(loadTuningSetup(options).search);
}

TEST_CASE("the shipped table loads as the default one", "[tuning]") {
  MlpOptions options;
  options.program = "test";
  const TuningSetup setup = loadTuningSetup(options);  // CUSYNC_SHIPPED_TUNING_TABLE, unless the variable is set
  REQUIRE_FALSE(setup.search);
  CHECK(setup.table->entries.size() >= 1);
}
