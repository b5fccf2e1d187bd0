// The prover accepts the generated policies and orders and rejects wrong ones, with a counterexample.
#include "model_fixture.h"
#include "spec_builder.h"

#include <cusync/codegen/policy_prover.h>

using namespace cusync;
using namespace cusync::policytest;
using codegen::constant;
using codegen::coordinate;
using codegen::extent;

TEST_CASE("MLP policies are proven for every batch size (symbolic B)", "[prover]") {
  Models models = buildModels(mlpSpec());
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  for (const char* name : {"Dep_dep_g1_TileSync", "Dep_dep_g1_RowSync"}) {
    const codegen::PolicyResult* policy = findPolicy(generation, name);
    REQUIRE(policy != nullptr);
    INFO(name << ": " << policy->proof.failure << " " << policy->proof.counterexample);
    CHECK(policy->proof.proven);
    CHECK(policy->proof.scope == codegen::ProofScope::AllParameterValues);
    CHECK(policy->proof.exact);
  }
}

TEST_CASE("Every derived candidate of the paper's specs is proven", "[prover]") {
  for (const spec::Spec& spec : {mlpSpec(), stridedSpec(), convSpec(), attentionSpec(), blockSpec()}) {
    Models models = buildModels(spec);
    codegen::Generation generation = codegen::generate(models.proofModels(), {});
    for (const auto& policy : generation.policies) {
      INFO(spec.name << " " << policy.candidate.structName() << ": " << policy.proof.failure << " "
                     << policy.proof.counterexample);
      CHECK(policy.proof.proven);
    }
    for (const auto& order : generation.orders) {
      INFO(spec.name << " " << order.order.structName() << ": " << order.proof.failure);
      CHECK(order.proof.proven);
    }
  }
}

TEST_CASE("StridedSync groups Q, K and V: value 3, exact only where all three are read", "[prover]") {
  Models models = buildModels(stridedSpec());
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  const codegen::PolicyResult* strided = findPolicy(generation, "Dep_dep1P_g1_StridedSync");
  REQUIRE(strided != nullptr);
  REQUIRE(strided->proof.proven);
  // gP reads Q and K; the V tile shares their semaphore, so gP waits for a tile it does not read.
  CHECK_FALSE(strided->proof.exact);
  const codegen::PolicyResult* tileSync = findPolicy(generation, "Dep_dep1P_g1_TileSync");
  REQUIRE(tileSync != nullptr);
  CHECK(tileSync->proof.exact);
}

TEST_CASE("A value off by one is rejected by the prover", "[prover]") {
  for (const spec::Spec& spec : {mlpSpec(), stridedSpec(), attentionSpec()}) {
    Models models = buildModels(spec);
    codegen::CandidateDerivation derivation = codegen::derivePolicyCandidates(*models.symbolic);
    for (const codegen::PolicyCandidate& candidate : derivation.candidates) {
      codegen::PolicyFunctions correct = codegen::policyFunctions(candidate);
      codegen::PolicyFunctions tooHigh = correct, tooLow = correct;
      tooHigh.value = correct.value + constant(1);
      tooLow.value = correct.value - constant(1);
      INFO(candidate.structName());
      REQUIRE(codegen::provePolicy(models.proofModels(), candidate, correct).proven);
      codegen::Proof high = codegen::provePolicy(models.proofModels(), candidate, tooHigh);
      CHECK_FALSE(high.proven);
      CHECK(high.failure.find("fewer tiles than its value") != std::string::npos);
      CHECK_FALSE(high.counterexample.empty());
      codegen::Proof low = codegen::provePolicy(models.proofModels(), candidate, tooLow);
      CHECK_FALSE(low.proven);
      CHECK(low.failure.find("more tiles than its value") != std::string::npos);
    }
  }
}

TEST_CASE("A hand-written RowSync with value grid.x - 1 is rejected", "[prover]") {
  Models models = buildModels(mlpSpec());
  codegen::PolicyCandidate row;
  row.dependency = "dep";
  row.consumerGrid = "g2";
  row.producerGrid = "g1";
  row.policy = "WrongRowSync";
  codegen::PolicyFunctions wrong{coordinate(1), extent(1), extent(0) - constant(1), coordinate(0)};
  codegen::Proof proof = codegen::provePolicy(models.proofModels(), row, wrong);
  CHECK_FALSE(proof.proven);
  CHECK(proof.scope == codegen::ProofScope::AllParameterValues);
}

TEST_CASE("A semaphore index outside the semaphore range is rejected", "[prover]") {
  Models models = buildModels(mlpSpec());
  codegen::PolicyCandidate candidate;
  candidate.dependency = "dep";
  candidate.consumerGrid = "g2";
  candidate.producerGrid = "g1";
  candidate.policy = "ShortCount";
  // RowSync with one semaphore too few.
  codegen::PolicyFunctions shortCount{coordinate(1), extent(1) - constant(1), extent(0), coordinate(0)};
  codegen::Proof proof = codegen::provePolicy(models.proofModels(), candidate, shortCount);
  CHECK_FALSE(proof.proven);
  CHECK(proof.failure.find("outside [0, semaphoreCount)") != std::string::npos);
}

TEST_CASE("Tile orders: row-major is a bijection, a colliding order is rejected", "[prover]") {
  Models models = buildModels(mlpSpec());
  codegen::ProofModels proofModels = models.proofModels();
  CHECK(codegen::proveTileOrder(proofModels, "g1", codegen::rowMajorOrder("g1", 2).index).proven);
  // x + y (no stride): two tiles share an index.
  codegen::Proof collide = codegen::proveTileOrder(proofModels, "g1", coordinate(0) + coordinate(1));
  CHECK_FALSE(collide.proven);
  CHECK(collide.failure.find("same order index") != std::string::npos);
  // x + X*y + 1: a bijection onto [1, tiles], not [0, tiles).
  codegen::Proof shifted =
      codegen::proveTileOrder(proofModels, "g1", codegen::rowMajorOrder("g1", 2).index + constant(1));
  CHECK_FALSE(shifted.proven);
}

TEST_CASE("Grouped producer orders: StridedSync's order puts Q, K, V of one dot-product tile together",
          "[prover][orders]") {
  Models models = buildModels(stridedSpec());
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  const codegen::TileOrderResult* grouped = nullptr;
  for (const auto& order : generation.orders)
    if (order.order.structName() == "Order_g1_GroupedBy_StridedSync_dep1P") grouped = &order;
  REQUIRE(grouped != nullptr);
  REQUIRE(grouped->proof.proven);
  CHECK(grouped->sameAs.empty());
  // Stride S = 3: tiles x = 0, 3, 6 of row 0 get indices 0, 1, 2.
  std::int64_t extents[3] = {9, 2, 1};
  for (std::int64_t k = 0; k < 3; ++k) {
    std::int64_t tile[3] = {3 * k, 0, 0};
    CHECK(codegen::evaluate(grouped->order.index, tile, extents) == k);
  }
  // TileSync's grouped order is row-major again: recognized as equal and not repeated.
  for (const auto& order : generation.orders)
    if (order.order.structName() == "Order_g1_GroupedBy_TileSync_dep1P") CHECK(order.sameAs == "Order_g1_RowMajor");
}

TEST_CASE("Attention chain: the column-grouped order of gP is column-major", "[prover][orders]") {
  Models models = buildModels(attentionSpec());
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  const codegen::TileOrderResult* column = nullptr;
  for (const auto& order : generation.orders)
    if (order.order.structName() == "Order_gP_GroupedBy_ColumnSync_depPR") column = &order;
  REQUIRE(column != nullptr);
  INFO(column->proof.failure);
  REQUIRE(column->proof.proven);
  std::int64_t extents[3] = {4, 2, 1};
  std::int64_t tile[3] = {1, 1, 0};
  CHECK(codegen::evaluate(column->order.index, tile, extents) == 1 * 2 + 1);
}

TEST_CASE("Attention chain: g1 follows gP's column-major order (a chain order), proven a bijection",
          "[prover][orders]") {
  Models models = buildModels(attentionSpec());
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  const codegen::TileOrderResult* chain = nullptr;
  for (const auto& order : generation.orders)
    if (order.order.structName() == "Order_g1_Chain_StridedSync_dep1P_GroupedBy_ColumnSync_depPR") chain = &order;
  REQUIRE(chain != nullptr);
  INFO(chain->proof.failure);
  REQUIRE(chain->proof.proven);
  CHECK(chain->sameAs.empty());
  CHECK(chain->order.consumerOrderStruct == "Order_gP_GroupedBy_ColumnSync_depPR");
  // Stride 4, B = 2 rows: gP tile (r, y) is the (r*2 + y)-th in column-major order; its Q, K, V tiles in g1 are
  // (r, y), (r + 4, y), (r + 8, y) and come 3*(r*2 + y), +1, +2.
  std::int64_t extents[3] = {12, 2, 1};
  for (std::int64_t r = 0; r < 4; ++r)
    for (std::int64_t y = 0; y < 2; ++y)
      for (std::int64_t k = 0; k < 3; ++k) {
        std::int64_t tile[3] = {r + 4 * k, y, 0};
        CHECK(codegen::evaluate(chain->order.index, tile, extents) == 3 * (r * 2 + y) + k);
      }
  // No chain order where the semaphores are not the consumer's tiles (RowSync rows are not gP tiles).
  for (const auto& order : generation.orders) CHECK(order.order.name.find("Chain_RowSync") == std::string::npos);
}

// Issue 16: a ForAll over Range(4*x, 4*x + 4), bounds moving with the consumer tile, is a block of four tiles.
TEST_CASE("A range that moves with the consumer tile yields a proven Block grouping", "[prover]") {
  SpecBuilder b("moving_range");
  b.parameter("B", 2, true);
  b.grid("g1", {num(16), param("B")}).grid("g2", {num(4), param("B")});
  spec::Tile xy = tile({dim("x"), dim("y")});
  b.dependency("dep", "g2", xy, {{"g1", {forAll(xy, "x", num(4) * dim("x"), num(4) * dim("x") + num(4))}}});
  Models models = buildModels(b.spec);
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  const codegen::PolicyResult* block = findPolicy(generation, "Dep_dep_g1_Block4Sync");
  REQUIRE(block != nullptr);
  CHECK(block->proof.proven);
  CHECK(block->proof.exact);  // a consumer waits for exactly its four tiles
}
