// The CPU simulation agrees with the prover: on the paper's specs and on hundreds of random specs (fixed seeds),
// every proven policy runs to completion without a consumer passing a wait early, and a policy whose value is off
// by one is rejected by the prover and caught by the simulation (a deadlock for +1; an early pass for -1 where
// consumers wait only for tiles they read). Every proven policy also completes with persistent stages, under a ticket
// per unit and under static units (the persistent GEMMs' two schedules), with blocks that hold no unit drawn ahead of
// the one they work on and with blocks that hold one or two (the persistent GEMMs' scheduler warp holds one).
#include "model_fixture.h"
#include "spec_builder.h"

#include <cusync/codegen/cpu_simulation.h>

#include <random>

using namespace cusync;
using namespace cusync::policytest;

namespace {

// The grouped order of `policy` if one was emitted, else row-major.
codegen::IndexExpression producerOrder(const codegen::Generation& generation, const codegen::PolicyResult& policy) {
  for (const codegen::TileOrderResult& order : generation.orders)
    if (order.proof.proven && order.order.policyStruct == policy.candidate.structName()) return order.order.index;
  return codegen::rowMajorOrder(policy.candidate.producerGrid, 3).index;
}

// Simulates the whole spec with `functions` on the edge of `policy` and TileSync on every other edge.
// `persistentBlocks` != 0: every stage runs that many persistent blocks, each taking a ticket per unit or, with
// `staticUnits`, its fixed sequence (the runtime's StageView::staticUnits), holding `unitsDrawnAhead` units drawn
// beyond the one it works on.
codegen::SimulationResult simulateWith(const Models& models, const codegen::Generation& generation,
                                       const codegen::PolicyResult& policy, const codegen::PolicyFunctions& functions,
                                       std::int64_t slots, std::uint64_t seed, std::int64_t persistentBlocks = 0,
                                       bool staticUnits = false, std::int64_t unitsDrawnAhead = 0) {
  codegen::SimulationSetup setup;
  std::map<std::string, codegen::IndexExpression> orders{
      {policy.candidate.producerGrid, producerOrder(generation, policy)}};
  setup.stages = codegen::simulatedStages(*models.concrete, orders);
  for (codegen::SimulatedStage& stage : setup.stages) {
    stage.persistentBlocks = persistentBlocks;
    stage.staticUnits = staticUnits;
    stage.unitsDrawnAhead = unitsDrawnAhead;
  }
  for (const spec::Dependency& dependency : models.concrete->spec().dependencies) {
    for (std::size_t p = 0; p < dependency.producers.size(); ++p) {
      bool chosen = dependency.name == policy.candidate.dependency && p == policy.candidate.producerIndex;
      codegen::PolicyCandidate tileSync;
      tileSync.dimensions.assign(models.concrete->grid(dependency.producers[p].grid).grid.dimensions.size(), {});
      codegen::PolicyFunctions f = chosen ? functions : codegen::policyFunctions(tileSync);
      setup.policies.push_back(codegen::simulatedPolicy(*models.concrete, dependency.name + "<-" +
                                                            dependency.producers[p].grid,
                                                        dependency.name, p, f.semaphore, f.value, f.semaphoreCount));
    }
  }
  setup.slots = slots;
  setup.seed = seed;
  return codegen::simulate(setup);
}

std::int64_t totalTiles(const Models& models) {
  std::int64_t total = 0;
  for (const auto& grid : models.concrete->grids()) {
    std::int64_t tiles = 1;
    for (const auto& extent : grid.extentValues) tiles *= extent.value_or(1);
    total += tiles;
  }
  return total;
}

struct Agreement {
  int proven = 0, simulated = 0, mutationsRejected = 0, earlyPassesCaught = 0, deadlocksCaught = 0;
  int persistentSimulated = 0;  // runs with persistent stages: both unit schedules, with and without units drawn ahead
  std::map<std::string, int> policies;  // how often each policy kind was exercised
};

// The property, for every candidate of one spec.
void checkAgreement(const spec::Spec& spec, std::uint64_t seed, Agreement& agreement) {
  Models models = buildModels(spec);
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  std::int64_t total = totalTiles(models);
  std::mt19937_64 random(seed);
  for (const codegen::PolicyResult& policy : generation.policies) {
    INFO("spec " << spec.name << " seed " << seed << " policy " << policy.candidate.structName() << ": "
                 << policy.proof.failure << " " << policy.proof.counterexample);
    REQUIRE(policy.proof.proven);  // every generated candidate of these shapes is sound
    ++agreement.proven;
    ++agreement.policies[policy.candidate.policy];
    for (std::int64_t slots : {std::int64_t{1}, std::int64_t{1} + static_cast<std::int64_t>(random() % 8), total}) {
      codegen::SimulationResult run = simulateWith(models, generation, policy, policy.functions, slots, random());
      INFO("slots " << slots << ": " << run.failure);
      CHECK(run.ok);
      ++agreement.simulated;
    }
    // Persistent stages, a ticket per unit and static units, with fewer and more blocks than slots, holding no unit
    // or one or two units drawn ahead: a unit waits only for earlier stages, so a unit held back by its block's
    // current one waits for nothing of its own stage, and every schedule completes.
    for (bool staticUnits : {false, true})
      for (std::int64_t ahead : {std::int64_t{0}, std::int64_t{1} + static_cast<std::int64_t>(random() % 2)}) {
        const std::int64_t slots = 1 + static_cast<std::int64_t>(random() % 8);
        const std::int64_t blocks = 1 + static_cast<std::int64_t>(random() % 12);
        codegen::SimulationResult run =
            simulateWith(models, generation, policy, policy.functions, slots, random(), blocks, staticUnits, ahead);
        INFO("persistent: " << blocks << " blocks per stage, " << slots << " slots, "
                            << (staticUnits ? "static units" : "a ticket per unit") << ", " << ahead
                            << " drawn ahead: " << run.failure);
        CHECK(run.ok);
        ++agreement.persistentSimulated;
      }
    codegen::PolicyFunctions tooHigh = policy.functions, tooLow = policy.functions;
    tooHigh.value = policy.functions.value + codegen::constant(1);
    tooLow.value = policy.functions.value - codegen::constant(1);
    CHECK_FALSE(codegen::provePolicy(models.proofModels(), policy.candidate, tooHigh).proven);
    CHECK_FALSE(codegen::provePolicy(models.proofModels(), policy.candidate, tooLow).proven);
    agreement.mutationsRejected += 2;
    codegen::SimulationResult high = simulateWith(models, generation, policy, tooHigh, total, random());
    CHECK_FALSE(high.ok);
    CHECK(high.failure.find("deadlock") != std::string::npos);
    agreement.deadlocksCaught += !high.ok;
    // The same wrong policy on persistent blocks with static units deadlocks too: the simulation of persistent
    // stages can fail.
    codegen::SimulationResult highPersistent =
        simulateWith(models, generation, policy, tooHigh, total, random(), 3, true);
    CHECK_FALSE(highPersistent.ok);
    CHECK(highPersistent.failure.find("deadlock") != std::string::npos);
    // And with tickets and a unit drawn ahead: holding units does not hide a wrong policy.
    codegen::SimulationResult highDrawnAhead =
        simulateWith(models, generation, policy, tooHigh, total, random(), 3, false, 1);
    CHECK_FALSE(highDrawnAhead.ok);
    CHECK(highDrawnAhead.failure.find("deadlock") != std::string::npos);
    std::size_t producers = models.concrete->dependency(policy.candidate.dependency).producers.size();
    if (policy.proof.exact && producers == 1) {
      // Every tile of a semaphore is read by each consumer waiting on it, and nothing else holds the consumer
      // back, so one post short is an early pass. (With a second producer, its wait may hold the consumer until
      // the early-passing semaphore is complete anyway.)
      codegen::SimulationResult low = simulateWith(models, generation, policy, tooLow, total, random());
      CHECK_FALSE(low.ok);
      CHECK(low.failure.find("passes its wait before") != std::string::npos);
      agreement.earlyPassesCaught += !low.ok;
    }
  }
}

}  // namespace

TEST_CASE("Simulation agrees with the prover on the paper's specs", "[simulation]") {
  Agreement agreement;
  std::uint64_t seed = 1;
  for (const spec::Spec& spec : {mlpSpec(), stridedSpec(), convSpec(), attentionSpec(), blockSpec()})
    checkAgreement(spec, seed++, agreement);
  CHECK(agreement.proven > 10);
  CHECK(agreement.deadlocksCaught == agreement.proven);
  CHECK(agreement.persistentSimulated == 4 * agreement.proven);
}

TEST_CASE("Simulation agrees with the prover on 300 random specs", "[simulation][random]") {
  Agreement agreement;
  std::mt19937_64 random(20241122);
  for (int i = 0; i < 300; ++i) checkAgreement(randomSpec(random, i), 1000 + static_cast<std::uint64_t>(i), agreement);
  // The property must have been exercised, not skipped.
  CHECK(agreement.proven >= 600);
  CHECK(agreement.deadlocksCaught == agreement.proven);
  CHECK(agreement.earlyPassesCaught > 100);
  CHECK(agreement.persistentSimulated == 4 * agreement.proven);
  // Every grouping kind was exercised.
  for (const char* policy : {"TileSync", "RowSync", "StridedSync", "Conv2DTileSync", "Block2Sync", "ColumnSync",
                             "BatchSync", "RowBatchSync"})
    CHECK(agreement.policies[policy] > 0);
  std::string kinds;
  for (const auto& [policy, count] : agreement.policies) kinds += " " + policy + ":" + std::to_string(count);
  WARN("policies exercised:" << kinds);
  WARN("random specs: " << agreement.proven << " proven policies, " << agreement.simulated << " simulations, "
                        << agreement.mutationsRejected << " mutations rejected, " << agreement.deadlocksCaught
                        << " deadlocks and " << agreement.earlyPassesCaught << " early passes caught");
}

TEST_CASE("The simulation itself catches a non-bijective order and an out-of-range semaphore", "[simulation]") {
  Models models = buildModels(mlpSpec());
  codegen::SimulationSetup setup;
  setup.stages = codegen::simulatedStages(*models.concrete, {{"g1", codegen::coordinate(0)}});
  CHECK(codegen::simulate(setup).failure.find("gives index") != std::string::npos);
  setup.stages = codegen::simulatedStages(*models.concrete, {});
  setup.policies.push_back(codegen::simulatedPolicy(*models.concrete, "short", "dep", 0, codegen::coordinate(1),
                                                    codegen::extent(0), codegen::extent(1) - codegen::constant(1)));
  CHECK(codegen::simulate(setup).failure.find("outside [0,") != std::string::npos);
}

TEST_CASE("Simulation: the attention chain with its chain and grouped orders runs to completion", "[simulation]") {
  Models models = buildModels(attentionSpec());
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  auto orderNamed = [&](const std::string& name) {
    for (const auto& order : generation.orders)
      if (order.order.structName() == name) return order.order.index;
    FAIL("no order " << name);
    return codegen::constant(0);
  };
  std::map<std::string, codegen::IndexExpression> orders{
      {"g1", orderNamed("Order_g1_Chain_StridedSync_dep1P_GroupedBy_ColumnSync_depPR")},
      {"gP", orderNamed("Order_gP_GroupedBy_ColumnSync_depPR")}};
  std::map<std::string, std::string> chosen{{"dep1P<-g1", "Dep_dep1P_g1_StridedSync"},
                                            {"depPR<-gP", "Dep_depPR_gP_ColumnSync"},
                                            {"depTR1<-gR", "Dep_depTR1_gR_TileSync"},
                                            {"depTR1<-g1", "Dep_depTR1_g1_TileSync"},
                                            {"depT2<-gT", "Dep_depT2_gT_RowSync"}};
  for (std::int64_t slots : {1, 5, 1000}) {
    codegen::SimulationSetup setup;
    setup.stages = codegen::simulatedStages(*models.concrete, orders);
    for (const auto& [edge, structName] : chosen) {
      const codegen::PolicyResult* policy = findPolicy(generation, structName);
      REQUIRE(policy != nullptr);
      const codegen::PolicyFunctions& f = policy->functions;
      setup.policies.push_back(codegen::simulatedPolicy(*models.concrete, edge, policy->candidate.dependency,
                                                        policy->candidate.producerIndex, f.semaphore, f.value,
                                                        f.semaphoreCount));
    }
    setup.slots = slots;
    codegen::SimulationResult result = codegen::simulate(setup);
    INFO("slots " << slots << ": " << result.failure);
    CHECK(result.ok);
  }
}
