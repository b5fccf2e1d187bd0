// The independent oracle on 1000 random .dep specs per run (fixed seeds, four shards of 250 that ctest runs in
// parallel): each spec goes through the parser and cusyncgen's pipeline; its header is compiled by the host
// compiler into one evaluator program per shard; the oracle checks every emitted policy and order at every
// admissible parameter value its proof claims, against tiles enumerated from the spec IR (spec_oracle.h). The
// specs include diamonds, fan-outs, transposes, symbolic x extents, strides and blocks with remainders.
// A spec cusyncgen rejects must be one where the oracle finds a read outside a grid.
#include "oracle/header_reading.h"
#include "oracle/random_dep_spec.h"
#include "oracle/spec_oracle.h"

#include <cusync/analysis/bounds_check.h>
#include <cusync/codegen/generation.h>
#include <cusync/codegen/header_emitter.h>
#include <cusync/dsl/parser.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace cusync;

namespace {

// cusyncgen's pipeline (tools/cusyncgen/driver.cpp): parse, model, bounds check, generate, emit.
struct Generated {
  spec::Spec spec;
  std::optional<std::string> header;  // nullopt: rejected
  std::string errors;
};

Generated runCusyncgenPipeline(const std::string& text, const std::string& file) {
  Generated result;
  dsl::Diagnostics diagnostics;
  auto spec = dsl::parseSpec(text, file, diagnostics);
  INFO(file << "\n" << text << dsl::render(diagnostics, dsl::SourceTexts{}));
  REQUIRE(spec.has_value());
  result.spec = *spec;
  analysis::ModelOptions options;
  auto symbolic = analysis::IslModel::build(*spec, options, diagnostics);
  if (symbolic) analysis::checkBounds(*symbolic, diagnostics);
  options.bindSymbolicParameters = true;
  auto bound = diagnostics.hasErrors() ? std::nullopt : analysis::IslModel::build(*spec, options, diagnostics);
  if (diagnostics.hasErrors() || !symbolic || !bound) {
    result.errors = dsl::render(diagnostics, dsl::SourceTexts{});
    return result;
  }
  codegen::Generation generation = codegen::generate(codegen::ProofModels{*symbolic, *bound}, {});
  result.header = codegen::emitHeader(generation, file);
  return result;
}

// The evaluator program: every generated header of a shard, a table of their functions (plain data, so 250
// headers compile in seconds), and a loop answering queries.
const char* kEvaluatorEntry = R"(
#include <cstdio>
#include <map>
#include <string>
struct Entry {
  std::uint32_t (*semaphoreCount)(cusync::GridShape);
  std::uint32_t (*sem)(cusync::TileCoord, cusync::GridShape);
  std::uint32_t (*value)(cusync::TileCoord, cusync::GridShape);
  std::uint32_t (*rankInSemaphore)(cusync::TileCoord, cusync::GridShape);
  std::uint32_t (*index)(cusync::TileCoord, cusync::GridShape);
};
struct Named {
  const char* spec;
  const char* name;
  Entry entry;
};
)";

const char* kEvaluatorMain = R"(
// Reads queries "spec struct X Y Z"; answers one line each: a policy's semaphoreCount, then sem, value and rank of
// every tile (x fastest), or an order's index of every tile.
int main() {
  std::map<std::string, Entry> entries;
  for (const Named& named : kTable) entries[std::string(named.spec) + " " + named.name] = named.entry;
  char spec[64], name[256];
  unsigned X, Y, Z;
  while (std::scanf("%63s %255s %u %u %u", spec, name, &X, &Y, &Z) == 5) {
    auto it = entries.find(std::string(spec) + " " + name);
    if (it == entries.end()) { std::printf("missing\n"); continue; }
    const Entry& e = it->second;
    cusync::GridShape grid{X, Y, Z};
    if (e.index == nullptr) std::printf("%u", e.semaphoreCount(grid));
    for (unsigned z = 0; z < Z; ++z)
      for (unsigned y = 0; y < Y; ++y)
        for (unsigned x = 0; x < X; ++x) {
          cusync::TileCoord t{x, y, z};
          if (e.index) std::printf(" %u", e.index(t, grid));
          else std::printf(" %u %u %u", e.sem(t, grid), e.value(t, grid), e.rankInSemaphore(t, grid));
        }
    std::printf("\n");
  }
}
)";

// One check to make: a struct of one spec at one binding.
struct Query {
  std::size_t spec;
  std::string structName;
  bool policy = true;
  const oracle::EmittedPolicy* emittedPolicy = nullptr;
  oracle::Values binding;
  GridShape grid;
  const oracle::EmittedProducerPolicy* emittedProducer = nullptr;  // a producer policy: checked for each reader
};

struct ShardTotals {
  int specs = 0, rejected = 0, policyChecks = 0, producerPolicyChecks = 0, orderChecks = 0;
  std::map<std::string, int> features, policyKinds;
};

// Answers of the evaluator for one query, as the functions the oracle calls.
struct Answer {
  GridShape grid;
  std::vector<std::uint32_t> numbers;
  std::uint32_t at(TileCoord t, int field, int fields, int offset) const {
    std::size_t linear = (std::size_t{t.z} * grid.y + t.y) * grid.x + t.x;
    return numbers.at(offset + linear * fields + field);
  }
};

void runShard(int shard, int specsPerShard) {
  std::filesystem::path directory =
      std::filesystem::path(CUSYNC_POLICY_SCRATCH_DIR) / ("oracle_shard" + std::to_string(shard));
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  ShardTotals totals;
  std::vector<Generated> generated;
  std::vector<oracle::EmittedHeader> headers;
  std::vector<std::vector<oracle::Values>> bindings;
  std::ostringstream includes, registrations;
  std::vector<Query> queries;
  for (int i = 0; i < specsPerShard; ++i) {
    std::uint64_t seed = 0x5eed0000u + static_cast<std::uint64_t>(shard) * 100000 + static_cast<std::uint64_t>(i);
    std::mt19937_64 random(seed);
    oracle::RandomSpec random_spec = oracle::randomDepSpec(random);
    for (const auto& [feature, count] : random_spec.features) totals.features[feature] += count;
    std::string name = "oracle" + std::to_string(shard) + "_" + std::to_string(i);
    INFO("seed " << seed << ":\n" << random_spec.text);
    generated.push_back(runCusyncgenPipeline(random_spec.text, name + ".dep"));
    const Generated& g = generated.back();
    bindings.push_back(oracle::admissibleValues(g.spec, 64));
    headers.emplace_back();
    ++totals.specs;
    if (!g.header) {
      // Rejected: the oracle must see why, a read outside its grid at some admissible value.
      ++totals.rejected;
      bool outside = false;
      for (const oracle::Values& values : bindings.back())
        for (const spec::Dependency& d : g.spec.dependencies)
          for (std::size_t p = 0; p < d.producers.size(); ++p)
            for (const oracle::Read& read : oracle::readsOf(g.spec, d, p, values))
              outside = outside || !read.outOfGrid.empty();
      INFO(g.errors);
      CHECK(outside);
      continue;
    }
    std::ofstream(directory / (name + ".h")) << *g.header;
    headers.back() = oracle::readHeader(*g.header);
    const oracle::EmittedHeader& header = headers.back();
    std::string ns = "cusync::generated::" + name;
    includes << "#include \"" << name << ".h\"\n";
    registrations << "#define P(T, ...) {\"" << name << "\", T::name, "
                  << "{&T::semaphoreCount, &T::sem, &T::value, &T::rankInSemaphore, nullptr}},\n"
                  << "#define O(T, ...) {\"" << name << "\", T::name, {nullptr, nullptr, nullptr, nullptr, &T::index}},\n"
                  << "  " << header.macroStem << "_POLICIES(P)\n  " << header.macroStem << "_PRODUCER_POLICIES(P)\n  "
                  << header.macroStem << "_TILE_ORDERS(O)\n"
                  << "#undef P\n#undef O\n";
    for (const oracle::EmittedPolicy& policy : header.policies) {
      ++totals.policyKinds[policy.structName.substr(policy.structName.rfind('_') + 1)];
      for (std::size_t b = 0; b < (policy.symbolic ? bindings.back().size() : 1); ++b)
        queries.push_back({generated.size() - 1, policy.structName, true, &policy, bindings.back()[b],
                           oracle::shapeOf(g.spec, policy.producerGrid, bindings.back()[b])});
    }
    for (const oracle::EmittedProducerPolicy& policy : header.producerPolicies) {
      ++totals.policyKinds["Producer_" + policy.structName.substr(policy.structName.rfind('_') + 1)];
      for (std::size_t b = 0; b < (policy.symbolic ? bindings.back().size() : 1); ++b) {
        Query query{generated.size() - 1, policy.structName, true, nullptr, bindings.back()[b],
                    oracle::shapeOf(g.spec, policy.producerGrid, bindings.back()[b])};
        query.emittedProducer = &policy;
        queries.push_back(query);
      }
    }
    for (const oracle::EmittedOrder& order : header.orders)
      for (std::size_t b = 0; b < (order.symbolic ? bindings.back().size() : 1); ++b)
        queries.push_back({generated.size() - 1, order.structName, false, nullptr, bindings.back()[b],
                           oracle::shapeOf(g.spec, order.grid, bindings.back()[b])});
  }
  std::ofstream(directory / "evaluator.cpp")
      << includes.str() << kEvaluatorEntry << "const Named kTable[] = {\n" << registrations.str() << "};\n"
      << kEvaluatorMain;
  std::string compile = std::string(CUSYNC_HOST_CXX) + " -std=c++17 -O0 -Wall -Wextra -Werror -I" +
                        CUSYNC_RUNTIME_INCLUDE_DIR + " -I" + directory.string() + " " +
                        (directory / "evaluator.cpp").string() + " -o " + (directory / "evaluator").string() +
                        " 2> " + (directory / "compile.log").string();
  INFO(compile);
  REQUIRE(std::system(compile.c_str()) == 0);
  {
    std::ofstream in(directory / "queries.txt");
    for (const Query& q : queries)
      in << "oracle" << shard << "_" << q.spec << " " << q.structName << " " << q.grid.x << " " << q.grid.y << " "
         << q.grid.z << "\n";
  }
  std::string run = (directory / "evaluator").string() + " < " + (directory / "queries.txt").string() + " > " +
                    (directory / "answers.txt").string();
  REQUIRE(std::system(run.c_str()) == 0);

  std::ifstream answers(directory / "answers.txt");
  std::string line;
  for (const Query& q : queries) {
    REQUIRE(std::getline(answers, line));
    Answer answer{q.grid, {}};
    std::istringstream numbers(line);
    for (std::uint32_t n; numbers >> n;) answer.numbers.push_back(n);
    const Generated& g = generated[q.spec];
    INFO("spec oracle" << shard << "_" << q.spec << ", " << q.structName << "\n" << g.spec.name << ":\n"
                       << line.size() << " answer bytes");
    REQUIRE(line != "missing");
    if (!q.policy) {
      for (const std::string& failure : oracle::checkOrder(
               q.structName, [&](TileCoord t, GridShape) { return answer.at(t, 0, 1, 0); }, q.grid))
        FAIL_CHECK(failure);
      ++totals.orderChecks;
      continue;
    }
    oracle::PolicyUnderTest policy{q.structName, [&](GridShape) { return answer.numbers.at(0); },
                                   [&](TileCoord t, GridShape) { return answer.at(t, 0, 3, 1); },
                                   [&](TileCoord t, GridShape) { return answer.at(t, 1, 3, 1); },
                                   [&](TileCoord t, GridShape) { return answer.at(t, 2, 3, 1); }};
    std::vector<std::string> dependencies{q.emittedProducer ? q.emittedProducer->dependencies
                                                            : std::vector<std::string>{q.emittedPolicy->dependency}};
    const std::string& producer = q.emittedProducer ? q.emittedProducer->producerGrid : q.emittedPolicy->producerGrid;
    int readers = 0;
    for (const spec::Dependency& d : g.spec.dependencies) {
      if (std::find(dependencies.begin(), dependencies.end(), d.name) == dependencies.end()) continue;
      for (std::size_t p = 0; p < d.producers.size(); ++p) {
        if (d.producers[p].grid != producer) continue;
        for (const std::string& failure : oracle::checkPolicy(policy, q.grid, oracle::readsOf(g.spec, d, p, q.binding)))
          FAIL_CHECK(failure);
        ++totals.policyChecks;
        ++readers;
      }
    }
    if (q.emittedProducer) {
      // A producer policy serves every dependency that reads its producer, and the list names all of them.
      int expected = 0;
      for (const spec::Dependency& d : g.spec.dependencies)
        for (const spec::ProducerTiles& p : d.producers) expected += p.grid == producer ? 1 : 0;
      CHECK(readers == expected);
      CHECK(readers >= 2);
      ++totals.producerPolicyChecks;
    }
  }
  std::string kinds, features;
  for (const auto& [kind, count] : totals.policyKinds) kinds += " " + kind + ":" + std::to_string(count);
  for (const auto& [feature, count] : totals.features) features += " " + feature + ":" + std::to_string(count);
  WARN("shard " << shard << ": " << totals.specs << " specs (" << totals.rejected << " rejected), "
                << totals.policyChecks << " policy (" << totals.producerPolicyChecks << " producer policy) and "
                << totals.orderChecks << " order checks; policies" << kinds
                << "; shapes" << features);
  // The property must have been exercised, with the shapes the issue names.
  CHECK(totals.policyChecks > 4 * specsPerShard);
  CHECK(totals.producerPolicyChecks > 0);
  for (const char* feature :
       {"diamond", "transpose", "symbolic x", "stride remainder", "block remainder", "scaled", "range from x",
        "clipped halo"})
    CHECK(totals.features[feature] > 0);
  if (std::getenv("CUSYNC_ORACLE_KEEP") == nullptr) std::filesystem::remove_all(directory);
}

}  // namespace

TEST_CASE("Oracle: 250 random specs (shard 1 of 4)", "[oracle][random]") { runShard(0, 250); }
TEST_CASE("Oracle: 250 random specs (shard 2 of 4)", "[oracle][random]") { runShard(1, 250); }
TEST_CASE("Oracle: 250 random specs (shard 3 of 4)", "[oracle][random]") { runShard(2, 250); }
TEST_CASE("Oracle: 250 random specs (shard 4 of 4)", "[oracle][random]") { runShard(3, 250); }
