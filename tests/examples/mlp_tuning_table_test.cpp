// The MLP examples' tuning table reader (examples/mlp/tuning_table.h): good tables, malformed JSON (with line and
// column), schema errors (with the entry and field), the nearest-M rule and the device/model match. No files are
// written: texts are parsed in memory, and the only file read is the shipped table.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <string>

#include "tuning_table.h"

using namespace cusync::examples;

namespace {

const std::string kH100 = "NVIDIA H100 80GB HBM3";

std::string entryText(int m, const std::string& extra = "", const std::string& device = kH100, int sms = 132,
                      const std::string& model = "gpt3_mlp") {
  return "{\"device\": \"" + device + "\", \"sms\": " + std::to_string(sms) + ", \"model\": \"" + model +
         "\", \"hidden\": 12288, \"intermediate\": 6144, \"m\": " + std::to_string(m) +
         ", \"variant\": \"TileSync+PDL\", \"config\": \"128x256x64_s4_coop_b1\"" + extra + "}";
}

std::string tableText(const std::vector<std::string>& entries) {
  std::string text = "{\n \"schema\": \"cusync-mlp-example-tuning/1\",\n \"entries\": [\n";
  for (std::size_t i = 0; i < entries.size(); ++i) text += "  " + entries[i] + (i + 1 < entries.size() ? ",\n" : "\n");
  return text + " ]\n}\n";
}

TuningTable parsed(const std::vector<std::string>& entries) {
  TuningTableResult result = parseTuningTable(tableText(entries), "t.json");
  INFO(result.error);
  REQUIRE(result.table);
  return *result.table;
}

std::string errorOf(const std::string& text) {
  TuningTableResult result = parseTuningTable(text, "t.json");
  REQUIRE_FALSE(result.table);
  return result.error;
}

int nearestM(const TuningTable& table, int m) {
  const TuningEntry* e = nearestTuningEntry(table, kH100, 132, "gpt3_mlp", 12288, 6144, m);
  REQUIRE(e);
  return e->m;
}

}  // namespace

TEST_CASE("the shipped table parses: 9 GPT-3 and 9 LLaMA entries on the H100, each a cusync variant") {
  TuningTableResult result = loadTuningTable(CUSYNC_SHIPPED_TUNING_TABLE);
  INFO(result.error);
  REQUIRE(result.table);
  REQUIRE(result.table->entries.size() == 18);
  int gpt3 = 0, llama = 0;
  for (const TuningEntry& e : result.table->entries) {
    CHECK(e.device == kH100);
    CHECK(e.sms == 132);
    CHECK(e.variant.find("Sync+") != std::string::npos);
    CHECK(e.streamSync.has_value());
    (e.model == "gpt3_mlp" ? gpt3 : llama) += 1;
  }
  CHECK(gpt3 == 9);
  CHECK(llama == 9);
  const TuningEntry* first = nearestTuningEntry(*result.table, kH100, 132, "llama_mlp", 8192, 2752, 1);
  REQUIRE(first);
  CHECK(first->kernels.config == "64x64x64_s6_ws_b2_p");
  CHECK(first->kernels.swiGluColumns == 64);
  CHECK(first->source == "docs/results/mlp_llama_h100.csv");
}

TEST_CASE("an entry's fields: split, order, LLaMA knobs and StreamSync's configuration") {
  const TuningTable table = parsed(
      {entryText(8, ", \"split\": [5, 2], \"order\": \"g8:row\", \"us\": 123.5, \"source\": \"x.csv\", "
                    "\"stream_sync\": {\"config\": \"64x128x64_s4_ws_b2_p_Rw\", \"order\": \"col\"}"),
       entryText(8, ", \"gate_up_order\": \"paired\", \"swiglu_columns\": 128", kH100, 132, "llama_mlp")});
  const TuningEntry& gpt3 = table.entries[0];
  CHECK(gpt3.kernels.producerParts == 5);
  CHECK(gpt3.kernels.consumerParts == 2);
  CHECK(gpt3.kernels.order == "g8:row");
  CHECK(gpt3.kernels.microseconds == Approx(123.5));
  CHECK(gpt3.source == "x.csv");
  REQUIRE(gpt3.streamSync);
  CHECK(gpt3.streamSync->config == "64x128x64_s4_ws_b2_p_Rw");
  CHECK(gpt3.streamSync->producerParts == 1);
  CHECK(gpt3.streamSync->order == "col");
  const TuningEntry& llama = table.entries[1];
  CHECK(llama.kernels.order == "row");  // the default
  CHECK(llama.kernels.pairedGateUp);
  CHECK(llama.kernels.swiGluColumns == 128);
  CHECK_FALSE(llama.streamSync);
}

TEST_CASE("malformed JSON is refused with the file, line and column") {
  CHECK(errorOf("{\n \"schema\": \"x\",\n \"entries\": [1,]\n}") ==
        "t.json: line 3, column 16: expected a JSON value, found ']'");
  CHECK(errorOf("{\"schema\": \"cusync-mlp-example-tuning/1\"") ==
        "t.json: line 1, column 41: expected ',' or '}', found the end of the file");
  CHECK(errorOf("{\"a\": 1, \"a\": 2}") == "t.json: line 1, column 10: duplicate key \"a\"");
  CHECK(errorOf("{\"a\": \"tab\there\"}").find("line 1, column 11: control character") != std::string::npos);
  CHECK(errorOf("{\"a\": 01}") == "t.json: line 1, column 8: expected ',' or '}', found '1'");  // no leading zeros
  CHECK(errorOf("{} x") == "t.json: line 1, column 4: unexpected text after the JSON value");
  CHECK(errorOf("") == "t.json: line 1, column 1: expected a JSON value, found the end of the file");
}

TEST_CASE("a table of another schema (the PyTorch op's) is refused by name") {
  CHECK(errorOf("{\"schema\": \"cusync-mlp-tuning/1\", \"entries\": []}").find(
            "not an MLP example tuning table") != std::string::npos);
  CHECK(errorOf("[]").find("not an MLP example tuning table") != std::string::npos);
}

TEST_CASE("missing or mistyped fields are refused with the entry and field named") {
  const std::string noVariant = "{\"device\": \"X\", \"sms\": 1, \"model\": \"gpt3_mlp\", \"hidden\": 1, "
                                "\"intermediate\": 1, \"m\": 1, \"config\": \"128x256x64_s4_coop_b1\"}";
  CHECK(errorOf(tableText({entryText(1), noVariant})) == "t.json: entry 1: \"variant\" is missing (a string)");
  CHECK(errorOf(tableText({entryText(0)})) == "t.json: entry 0: \"m\" must be a positive integer");
  CHECK(errorOf(tableText({entryText(1, ", \"split\": [2]")})) ==
        "t.json: entry 0: \"split\" must be [first parts, second parts], each >= 1");
  CHECK(errorOf(tableText({entryText(1, ", \"order\": \"g0\"")})) ==
        "t.json: entry 0: \"order\": unknown tile order 'g0' (row, col, gN or P:C)");
  CHECK(errorOf(tableText({entryText(1, ", \"swiglu_columns\": 64")})).find("LLaMA's (model llama_mlp) only") !=
        std::string::npos);
  CHECK(errorOf(tableText({entryText(1, "", kH100, 132, "bert")})).find("\"model\" must be gpt3_mlp or llama_mlp") !=
        std::string::npos);
  CHECK(errorOf(tableText({entryText(1, ", \"stream_sync\": {\"order\": \"row\"}")})) ==
        "t.json: entry 0: stream_sync: \"config\" is missing (a string)");
  CHECK(errorOf("{\"schema\": \"cusync-mlp-example-tuning/1\"}") ==
        "t.json: \"entries\" is missing (a list)");
}

TEST_CASE("an unreadable file is an error naming it") {
  const TuningTableResult result = loadTuningTable("/nonexistent/cusync/tuning_table.json");
  CHECK_FALSE(result.table);
  CHECK(result.error == "/nonexistent/cusync/tuning_table.json: cannot read the tuning table");
}

TEST_CASE("the nearest M is on a log scale, and an exact tie goes to the larger M") {
  std::vector<std::string> entries;
  for (int m : {1, 8, 64, 128, 256, 512, 1024, 2048, 4096}) entries.push_back(entryText(m));
  const TuningTable table = parsed(entries);
  CHECK(nearestM(table, 1000) == 1024);
  CHECK(nearestM(table, 700) == 512);  // ln(700/512) = 0.31 < ln(1024/700) = 0.38
  CHECK(nearestM(table, 23) == 64);    // ln(23/8) = 1.06 > ln(64/23) = 1.02, though linearly nearer 8
  CHECK(nearestM(table, 100000) == 4096);
  CHECK(nearestM(table, 2) == 1);
  CHECK(nearestM(parsed({entryText(8), entryText(32)}), 16) == 32);  // an exact tie
  CHECK(nearestM(parsed({entryText(32), entryText(8)}), 16) == 32);  // whatever the order in the file
  CHECK(nearestM(parsed({entryText(128), entryText(512)}), 256) == 512);
}

TEST_CASE("entries of another device, SM count or model are not chosen") {
  const TuningTable table = parsed({entryText(64, "", "NVIDIA H200", 132), entryText(64, "", kH100, 114),
                                    entryText(64, "", kH100, 132, "llama_mlp")});
  CHECK(nearestTuningEntry(table, kH100, 132, "gpt3_mlp", 12288, 6144, 64) == nullptr);
  CHECK(nearestTuningEntry(table, kH100, 132, "gpt3_mlp", 8192, 2752, 64) == nullptr);  // another shape
  CHECK(nearestTuningEntry(table, kH100, 114, "gpt3_mlp", 12288, 6144, 1)->m == 64);
}

TEST_CASE("the table path: the option, else the environment, else the shipped one") {
  CHECK(tuningTablePath("mine.json", "env.json", "shipped.json").path == "mine.json");
  CHECK(tuningTablePath("mine.json", "env.json", "shipped.json").explicitlyNamed);
  CHECK(tuningTablePath("", "env.json", "shipped.json").path == "env.json");
  CHECK(tuningTablePath("", "env.json", "shipped.json").origin == kExampleTuningTableEnvironment);
  CHECK(tuningTablePath("", "", "shipped.json").path == "shipped.json");
  CHECK_FALSE(tuningTablePath("", nullptr, "shipped.json").explicitlyNamed);
}
