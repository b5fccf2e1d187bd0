// The independent oracle (oracle/spec_oracle.h) on every golden header: compiled here by the host compiler, each
// policy and order checked at every admissible parameter value its proof claims (all values the spec's
// constraints allow when proven symbolically, sampled where there are too many; the given values otherwise),
// against tiles enumerated straight from the .dep file, without cusyncgen's isl model or evaluator.
#include "oracle/header_reading.h"
#include "oracle/spec_oracle.h"

#include <cusync/dsl/parser.h>

#include "attention.h"
#include "attention_decode.h"
#include "attention_prompt.h"
#include "conv2d.h"
#include "conv2d_3x3.h"
#include "conv2d_bottleneck.h"
#include "conv2d_stride2.h"
#include "gpt3_mlp.h"
#include "gpt3_mlp_fused.h"
#include "llama_mlp_fused.h"
#include "gpt3_mlp_skinny.h"
#include "llama_mlp_skinny.h"
#include "llama_mlp.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <map>

using namespace cusync;

namespace {

std::string readText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct GoldenCase {
  spec::Spec spec;
  oracle::EmittedHeader header;
  std::vector<oracle::Values> bindings;  // admissible values, the given (default) ones first
  int policyChecks = 0, producerPolicyChecks = 0, orderChecks = 0;
};

// `limit`: up to how many admissible values are checked each (oracle::admissibleValues), sampled beyond it.
GoldenCase load(const std::string& specPath, const std::string& headerName, std::size_t limit = 16) {
  dsl::SourceTexts sources;
  dsl::Diagnostics diagnostics;
  auto spec = dsl::parseSpecFile(std::string(CUSYNC_SOURCE_DIR) + "/" + specPath, sources, diagnostics);
  REQUIRE(spec.has_value());
  GoldenCase c{*spec, oracle::readHeader(readText(std::string(CUSYNC_SOURCE_DIR) + "/tests/golden/" + headerName)),
               {}};
  c.bindings = oracle::admissibleValues(*spec, limit);
  oracle::Values given;
  for (const spec::Parameter& p : spec->parameters) given[p.name] = p.defaultValue;
  REQUIRE(c.bindings.front() == given);
  return c;
}

const spec::Dependency& dependencyNamed(const spec::Spec& spec, const std::string& name) {
  for (const spec::Dependency& d : spec.dependencies)
    if (d.name == name) return d;
  FAIL("no dependency " << name);
  throw;
}

template <class Policy>
void checkPolicy(GoldenCase& c, const char* dependencyName, const char* producer, const char*) {
  const oracle::EmittedPolicy* emitted = nullptr;
  for (const auto& p : c.header.policies) emitted = p.structName == Policy::name ? &p : emitted;
  REQUIRE(emitted != nullptr);
  oracle::PolicyUnderTest policy{Policy::name, &Policy::semaphoreCount, &Policy::sem, &Policy::value,
                                 &Policy::rankInSemaphore};
  const spec::Dependency& dependency = dependencyNamed(c.spec, dependencyName);
  for (std::size_t b = 0; b < (emitted->symbolic ? c.bindings.size() : 1); ++b) {
    for (std::size_t p = 0; p < dependency.producers.size(); ++p) {
      if (dependency.producers[p].grid != producer) continue;
      auto reads = oracle::readsOf(c.spec, dependency, p, c.bindings[b]);
      auto failures = oracle::checkPolicy(policy, oracle::shapeOf(c.spec, producer, c.bindings[b]), reads);
      INFO("binding " << b);
      for (const std::string& failure : failures) FAIL_CHECK(failure);
      ++c.policyChecks;
    }
  }
}

// A producer policy: the same checks, for every dependency it serves; and it serves every one reading the grid.
template <class Policy>
void checkProducerPolicy(GoldenCase& c, const char* producer, const char* dependencies) {
  const oracle::EmittedProducerPolicy* emitted = nullptr;
  for (const auto& p : c.header.producerPolicies) emitted = p.structName == Policy::name ? &p : emitted;
  REQUIRE(emitted != nullptr);
  oracle::PolicyUnderTest policy{Policy::name, &Policy::semaphoreCount, &Policy::sem, &Policy::value,
                                 &Policy::rankInSemaphore};
  std::size_t readers = 0;
  for (const spec::Dependency& dependency : c.spec.dependencies)
    for (std::size_t p = 0; p < dependency.producers.size(); ++p) {
      if (dependency.producers[p].grid != producer) continue;
      ++readers;
      CHECK_THAT(std::string(" ") + dependencies + " ", Catch::Contains(" " + dependency.name + " "));
      for (std::size_t b = 0; b < (emitted->symbolic ? c.bindings.size() : 1); ++b) {
        auto reads = oracle::readsOf(c.spec, dependency, p, c.bindings[b]);
        INFO(Policy::name << " for " << dependency.name << ", binding " << b);
        for (const std::string& failure :
             oracle::checkPolicy(policy, oracle::shapeOf(c.spec, producer, c.bindings[b]), reads))
          FAIL_CHECK(failure);
        ++c.producerPolicyChecks;
      }
    }
  CHECK(readers >= 2);
}

template <class Order>
void checkOrder(GoldenCase& c, const char* grid) {
  const oracle::EmittedOrder* emitted = nullptr;
  for (const auto& o : c.header.orders) emitted = o.structName == Order::name ? &o : emitted;
  REQUIRE(emitted != nullptr);
  for (std::size_t b = 0; b < (emitted->symbolic ? c.bindings.size() : 1); ++b) {
    for (const std::string& failure :
         oracle::checkOrder(Order::name, &Order::index, oracle::shapeOf(c.spec, grid, c.bindings[b])))
      FAIL_CHECK(failure);
    ++c.orderChecks;
  }
}

}  // namespace

#define CUSYNC_ORACLE_POLICY(T, dependency, producer, consumer) checkPolicy<T>(c, dependency, producer, consumer);
#define CUSYNC_ORACLE_ORDER(T, grid) checkOrder<T>(c, grid);
#define CUSYNC_ORACLE_PRODUCER_POLICY(T, producer, dependencies) checkProducerPolicy<T>(c, producer, dependencies);

TEST_CASE("Oracle: every policy and order of the golden headers, at every admissible value proven", "[oracle]") {
  struct Totals {
    const char* spec;
    int policies, orders;
  };
  std::vector<Totals> totals;
  {
    GoldenCase c = load("examples/mlp/gpt3_mlp.dep", "gpt3_mlp.h");
    CUSYNC_GPT3_MLP_POLICIES(CUSYNC_ORACLE_POLICY)
    CUSYNC_GPT3_MLP_PRODUCER_POLICIES(CUSYNC_ORACLE_PRODUCER_POLICY)
    CUSYNC_GPT3_MLP_TILE_ORDERS(CUSYNC_ORACLE_ORDER)
    CHECK(c.bindings.size() > 3);
    totals.push_back({"gpt3_mlp", c.policyChecks, c.orderChecks});
  }
  {
    // The fused chain's k-split: a consumer unit reads the producer columns its k-range covers.
    GoldenCase c = load("examples/mlp/gpt3_mlp_fused.dep", "gpt3_mlp_fused.h");
    CUSYNC_GPT3_MLP_FUSED_POLICIES(CUSYNC_ORACLE_POLICY)
    CUSYNC_GPT3_MLP_FUSED_PRODUCER_POLICIES(CUSYNC_ORACLE_PRODUCER_POLICY)
    CUSYNC_GPT3_MLP_FUSED_TILE_ORDERS(CUSYNC_ORACLE_ORDER)
    CHECK(c.policyChecks > 0);
    totals.push_back({"gpt3_mlp_fused", c.policyChecks, c.orderChecks});
  }
  {
    // The LLaMA chain: S tiles (one per paired gate/up GEMM tile) read by k-ranges of the second GEMM.
    GoldenCase c = load("examples/mlp/llama_mlp_fused.dep", "llama_mlp_fused.h");
    CUSYNC_LLAMA_MLP_FUSED_POLICIES(CUSYNC_ORACLE_POLICY)
    CUSYNC_LLAMA_MLP_FUSED_PRODUCER_POLICIES(CUSYNC_ORACLE_PRODUCER_POLICY)
    CUSYNC_LLAMA_MLP_FUSED_TILE_ORDERS(CUSYNC_ORACLE_ORDER)
    CHECK(c.policyChecks > 0);
    totals.push_back({"llama_mlp_fused", c.policyChecks, c.orderChecks});
  }
  {
    // The skinny chains (M <= 8): 32-row tiles, k-ranges of 32-deep k-blocks.
    GoldenCase c = load("examples/mlp/gpt3_mlp_skinny.dep", "gpt3_mlp_skinny.h");
    CUSYNC_GPT3_MLP_SKINNY_POLICIES(CUSYNC_ORACLE_POLICY)
    CUSYNC_GPT3_MLP_SKINNY_PRODUCER_POLICIES(CUSYNC_ORACLE_PRODUCER_POLICY)
    CUSYNC_GPT3_MLP_SKINNY_TILE_ORDERS(CUSYNC_ORACLE_ORDER)
    CHECK(c.policyChecks > 0);
    totals.push_back({"gpt3_mlp_skinny", c.policyChecks, c.orderChecks});
  }
  {
    // LLaMA's: a 32-deep k-block reads two 16-column S tiles.
    GoldenCase c = load("examples/mlp/llama_mlp_skinny.dep", "llama_mlp_skinny.h");
    CUSYNC_LLAMA_MLP_SKINNY_POLICIES(CUSYNC_ORACLE_POLICY)
    CUSYNC_LLAMA_MLP_SKINNY_PRODUCER_POLICIES(CUSYNC_ORACLE_PRODUCER_POLICY)
    CUSYNC_LLAMA_MLP_SKINNY_TILE_ORDERS(CUSYNC_ORACLE_ORDER)
    CHECK(c.policyChecks > 0);
    totals.push_back({"llama_mlp_skinny", c.policyChecks, c.orderChecks});
  }
  {
    GoldenCase c = load("examples/mlp/llama_mlp.dep", "llama_mlp.h");
    CUSYNC_LLAMA_MLP_POLICIES(CUSYNC_ORACLE_POLICY)
    CUSYNC_LLAMA_MLP_PRODUCER_POLICIES(CUSYNC_ORACLE_PRODUCER_POLICY)
    CUSYNC_LLAMA_MLP_TILE_ORDERS(CUSYNC_ORACLE_ORDER)
    totals.push_back({"llama_mlp", c.policyChecks, c.orderChecks});
  }
  {
    GoldenCase c = load("examples/attention/attention.dep", "attention.h");
    CHECK(c.bindings.size() == 8);  // B = 1 .. 8, every one
    CUSYNC_ATTENTION_POLICIES(CUSYNC_ORACLE_POLICY)
    CUSYNC_ATTENTION_PRODUCER_POLICIES(CUSYNC_ORACLE_PRODUCER_POLICY)
    CUSYNC_ATTENTION_TILE_ORDERS(CUSYNC_ORACLE_ORDER)
    CHECK(c.producerPolicyChecks >= 2 * 8);  // g1 feeds dep1P and depTR1: each producer policy, for both, every B
    totals.push_back({"attention", c.policyChecks, c.orderChecks});
  }
  {
    GoldenCase c = load("examples/attention/attention_decode.dep", "attention_decode.h");
    CUSYNC_ATTENTION_DECODE_POLICIES(CUSYNC_ORACLE_POLICY)
    CUSYNC_ATTENTION_DECODE_PRODUCER_POLICIES(CUSYNC_ORACLE_PRODUCER_POLICY)
    CUSYNC_ATTENTION_DECODE_TILE_ORDERS(CUSYNC_ORACLE_ORDER)
    totals.push_back({"attention_decode", c.policyChecks, c.orderChecks});
  }
  {
    GoldenCase c = load("examples/attention/attention_prompt.dep", "attention_prompt.h", 29);
    CHECK(c.bindings.size() == 29);  // Rows = B*S/128 = 4 .. 32, every one
    CUSYNC_ATTENTION_PROMPT_POLICIES(CUSYNC_ORACLE_POLICY)
    CUSYNC_ATTENTION_PROMPT_PRODUCER_POLICIES(CUSYNC_ORACLE_PRODUCER_POLICY)
    CUSYNC_ATTENTION_PROMPT_TILE_ORDERS(CUSYNC_ORACLE_ORDER)
    totals.push_back({"attention_prompt", c.policyChecks, c.orderChecks});
  }
  {
    GoldenCase c = load("examples/conv2d/conv2d.dep", "conv2d.h");
    CUSYNC_CONV2D_POLICIES(CUSYNC_ORACLE_POLICY)
    CUSYNC_CONV2D_PRODUCER_POLICIES(CUSYNC_ORACLE_PRODUCER_POLICY)
    CUSYNC_CONV2D_TILE_ORDERS(CUSYNC_ORACLE_ORDER)
    totals.push_back({"conv2d", c.policyChecks, c.orderChecks});
  }
  {
    // Halo ranges clipped with min and max: the oracle evaluates them itself, at every B in [1, 32].
    GoldenCase c = load("examples/conv2d/conv2d_3x3.dep", "conv2d_3x3.h", 32);
    CHECK(c.bindings.size() == 32);
    CUSYNC_CONV2D_3X3_POLICIES(CUSYNC_ORACLE_POLICY)
    CUSYNC_CONV2D_3X3_PRODUCER_POLICIES(CUSYNC_ORACLE_PRODUCER_POLICY)
    CUSYNC_CONV2D_3X3_TILE_ORDERS(CUSYNC_ORACLE_ORDER)
    totals.push_back({"conv2d_3x3", c.policyChecks, c.orderChecks});
  }
  {
    GoldenCase c = load("examples/conv2d/conv2d_bottleneck.dep", "conv2d_bottleneck.h", 32);
    CUSYNC_CONV2D_BOTTLENECK_POLICIES(CUSYNC_ORACLE_POLICY)
    CUSYNC_CONV2D_BOTTLENECK_PRODUCER_POLICIES(CUSYNC_ORACLE_PRODUCER_POLICY)
    CUSYNC_CONV2D_BOTTLENECK_TILE_ORDERS(CUSYNC_ORACLE_ORDER)
    totals.push_back({"conv2d_bottleneck", c.policyChecks, c.orderChecks});
  }
  {
    GoldenCase c = load("examples/conv2d/conv2d_stride2.dep", "conv2d_stride2.h", 32);
    CUSYNC_CONV2D_STRIDE2_POLICIES(CUSYNC_ORACLE_POLICY)
    CUSYNC_CONV2D_STRIDE2_PRODUCER_POLICIES(CUSYNC_ORACLE_PRODUCER_POLICY)
    CUSYNC_CONV2D_STRIDE2_TILE_ORDERS(CUSYNC_ORACLE_ORDER)
    CHECK(c.producerPolicyChecks >= 2 * 32);  // g1 feeds dep3x3 and dep1x1: each producer policy, both, every B
    totals.push_back({"conv2d_stride2", c.policyChecks, c.orderChecks});
  }
  for (const Totals& t : totals) {
    INFO(t.spec);
    CHECK(t.policies > 0);
    CHECK(t.orders > 0);
  }
}

TEST_CASE("Oracle: catches a wrong value, an out-of-range semaphore and a non-bijective order", "[oracle]") {
  GoldenCase c = load("examples/mlp/gpt3_mlp.dep", "gpt3_mlp.h");
  using Row = generated::gpt3_mlp::Dep_dep_g1_RowSync;
  const spec::Dependency& dependency = dependencyNamed(c.spec, "dep");
  GridShape grid = oracle::shapeOf(c.spec, "g1", c.bindings[0]);
  auto reads = oracle::readsOf(c.spec, dependency, 0, c.bindings[0]);
  oracle::PolicyUnderTest policy{"row", &Row::semaphoreCount, &Row::sem, &Row::value, &Row::rankInSemaphore};
  CHECK(oracle::checkPolicy(policy, grid, reads).empty());
  oracle::PolicyUnderTest lowValue = policy;
  lowValue.value = [](TileCoord t, GridShape g) { return Row::value(t, g) - 1; };
  CHECK_THAT(oracle::checkPolicy(lowValue, grid, reads).at(0), Catch::Contains("for value 47, but 48 producer tiles"));
  oracle::PolicyUnderTest fewSemaphores = policy;
  fewSemaphores.semaphoreCount = [](GridShape g) { return g.y - 1; };
  CHECK_THAT(oracle::checkPolicy(fewSemaphores, grid, reads).at(0), Catch::Contains("is outside [0, 7)"));
  auto columnMajor = [](TileCoord t, GridShape g) { return t.y + g.y * t.x; };
  CHECK(oracle::checkOrder("columnMajor", columnMajor, grid).empty());
  auto collides = [](TileCoord t, GridShape) { return t.x; };
  CHECK_THAT(oracle::checkOrder("collides", collides, grid).at(0), Catch::Contains("is taken by another tile"));
}
