// cusyncgen's policies beyond TileSync and RowSync on the GPU, and producer policies serving several consumers:
//   [policy-kinds]  StridedSync, ColumnSync, Block2Sync and Conv2DTileSync, each on a producer -> consumer pair
//                   (tests/gpu/specs/policy_kinds.dep);
//   [diamond]       a -> b, a -> c, (b, c) -> d, where a posts under Producer_a_TileSync or Producer_a_RowSync
//                   and both b and c wait through it (tests/gpu/specs/diamond.dep);
//   [attention]     the bundled attention spec's five kernels: g1 posts under Producer_g1_StridedSync, which gP
//                   (Q and K tiles) and gT (V tiles) both wait through; gP -ColumnSync-> gR -TileSync-> gT
//                   -RowSync-> g2; g1 and gP run in their generated grouped orders.
// Under the wait-kernel and programmatic dependent launch, random per-tile delays, every element of every stage
// checked by the host after each iteration.
#include <cstdint>

#include <catch2/catch.hpp>

#include "cusync/cusync.cuh"
#include "dag_scenario.cuh"
#include "scenario_checks.h"
#include "test_config.h"

#include "attention.h"
#include "diamond.h"
#include "policy_kinds.h"

using namespace cusync;
using namespace cusync::gpu_test;

namespace {

namespace kinds = cusync::generated::policy_kinds;
namespace diamond = cusync::generated::diamond;
namespace attention = cusync::generated::attention;

StageOrdering orderedLaunch() { return GENERATE(StageOrdering::WaitKernel, StageOrdering::ProgrammaticLaunch); }

std::uint32_t rows() { return scaled(256u, 6u); }  // the specs' symbolic R, within 1 <= R <= 1024
std::uint32_t iterations() { return scaled(4u, 2u); }
std::uint32_t elementsPerTile() { return scaled(512u, 64u); }
std::uint32_t maxDelay() { return scaled(20000u, 2000u); }

// One producer -> consumer pair: the producer posts under Policy, the consumer reads through Read.
template <class Policy, class Read>
void runPair(GridShape producerGrid, GridShape consumerGrid) {
  const StageOrdering ordering = orderedLaunch();
  const std::uint32_t seed = testSeed();
  INFO(Policy::name << ", ordering " << orderingName(ordering) << ", seed " << seed);
  DagScenario dag(ordering, elementsPerTile(), maxDelay(), seed);
  const std::size_t producer = dag.addSource<Policy>("producer", producerGrid);
  dag.addRelay<TileSync, Policy, Read>("consumer", consumerGrid, producer);
  runCheckedIterations(dag, iterations());
  requireSemaphoresCount<Policy>(dag.stage(producer), iterations());
}

}  // namespace

TEST_CASE("generated StridedSync: a consumer tile reads producer tiles x, x + 4, x + 8", "[policy-kinds]") {
  runPair<kinds::Dep_dStrided_stridedProducer_StridedSync, StridedReads<4, 3>>(GridShape{12, rows()},
                                                                              GridShape{4, rows()});
}

TEST_CASE("generated ColumnSync: a consumer tile reads a whole producer column", "[policy-kinds]") {
  runPair<kinds::Dep_dColumn_columnProducer_ColumnSync, WholeColumn>(GridShape{12, rows()}, GridShape{12, 2});
}

TEST_CASE("generated Block2Sync: a consumer tile reads producer tiles 2x and 2x + 1", "[policy-kinds]") {
  runPair<kinds::Dep_dBlock_blockProducer_Block2Sync, BlockReads<2>>(GridShape{12, rows()}, GridShape{6, rows()});
}

TEST_CASE("generated Conv2DTileSync: a consumer tile reads producer tile 2x", "[policy-kinds]") {
  runPair<kinds::Dep_dConv_convProducer_Conv2DTileSync, ScaledRead<2>>(GridShape{12, rows()}, GridShape{6, rows()});
}

TEMPLATE_TEST_CASE("diamond: a posts under one producer policy that b (tile) and c (rows) both wait through",
                   "[diamond]", diamond::Producer_a_TileSync, diamond::Producer_a_RowSync) {
  const StageOrdering ordering = orderedLaunch();
  const std::uint32_t seed = testSeed();
  INFO(TestType::name << ", ordering " << orderingName(ordering) << ", seed " << seed);
  const GridShape grid{6, rows()};
  DagScenario dag(ordering, elementsPerTile(), maxDelay(), seed);
  const std::size_t a = dag.addSource<TestType>("a", grid);
  const std::size_t b = dag.addRelay<diamond::Dep_bcd_b_TileSync, TestType, SameTile>("b", grid, a);
  const std::size_t c = dag.addRelay<diamond::Dep_bcd_c_TileSync, TestType, WholeRow>("c", grid, a);
  dag.addRelay<TileSync, diamond::Dep_bcd_b_TileSync, SameTile, diamond::Dep_bcd_c_TileSync, SameTile>("d", grid, b,
                                                                                                      c);
  runCheckedIterations(dag, iterations());
  requireSemaphoresCount<TestType>(dag.stage(a), iterations());
}

TEST_CASE("attention: g1 posts under Producer_g1_StridedSync for both gP and gT; all five stages correct",
          "[attention]") {
  const StageOrdering ordering = orderedLaunch();
  const std::uint32_t seed = testSeed();
  INFO("ordering " << orderingName(ordering) << ", seed " << seed);
  namespace p = attention::parameters;
  constexpr std::uint32_t kStride = p::H / (8 * p::TileN);  // tiles between the Q, K and V parts of a g1 row
  constexpr std::uint32_t kBatch = 2;                       // symbolic B, within 1 <= B <= 8
  constexpr std::uint32_t kRows = kBatch * p::S / p::TileM;
  const GridShape g1{3 * kStride, kRows}, gP{kStride, kRows}, gR{kStride, 1}, gT{kStride, kRows},
      g2{p::H / p::TileN, kRows};
  using QKV = attention::Producer_g1_StridedSync;
  DagScenario dag(ordering, scaled(256u, 32u), maxDelay(), seed);
  const std::size_t qkv = dag.addSource<QKV>("g1", g1);
  dag.stage(qkv).setTileOrder<attention::Order_g1_GroupedBy_StridedSync_dep1P>();
  const std::size_t dot = dag.addRelay<attention::Dep_depPR_gP_ColumnSync, QKV, StridedReads<kStride, 2>>("gP", gP, qkv);
  dag.stage(dot).setTileOrder<attention::Order_gP_GroupedBy_ColumnSync_depPR>();
  const std::size_t reduce =
      dag.addRelay<attention::Dep_depTR1_gR_TileSync, attention::Dep_depPR_gP_ColumnSync, WholeColumn>("gR", gR, dot);
  const std::size_t softmaxV =
      dag.addRelay<attention::Dep_dep23_gT_RowSync, attention::Dep_depTR1_gR_TileSync, RowZero, QKV,
                   ShiftedRead<2 * kStride>>("gT", gT, reduce, qkv);
  dag.addRelay<TileSync, attention::Dep_dep23_gT_RowSync, WholeRow>("g2", g2, softmaxV);
  runCheckedIterations(dag, iterations());
  requireSemaphoresCount<QKV>(dag.stage(qkv), iterations());
}
