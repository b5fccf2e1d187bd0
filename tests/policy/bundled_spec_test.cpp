// The golden headers of the bundled specs, compiled here by the host compiler, checked tile by tile against the
// isl model of their spec: every semaphore in range, every waited value equal to the number of tiles sharing the
// semaphore, every order a bijection, each function equal to the one that was proven, and a CPU simulation of the
// whole spec with the compiled functions.
#include "model_fixture.h"

#include <cusync/codegen/cpu_simulation.h>
#include <cusync/codegen/header_emitter.h>
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

#include <fstream>
#include <iterator>
#include <map>
#include <set>

using namespace cusync;
using namespace cusync::policytest;

namespace {

spec::Spec parseBundled(const std::string& relativePath) {
  dsl::SourceTexts sources;
  dsl::Diagnostics diagnostics;
  auto spec = dsl::parseSpecFile(std::string(CUSYNC_SOURCE_DIR) + "/" + relativePath, sources, diagnostics);
  INFO(diagnosticsText(diagnostics));
  REQUIRE(spec.has_value());
  return *spec;
}

GridShape shapeOf(const analysis::IslModel& model, const std::string& grid) {
  codegen::SimulatedTile extents = codegen::concreteExtents(model, grid);
  return GridShape{static_cast<std::uint32_t>(extents[0]), static_cast<std::uint32_t>(extents[1]),
                   static_cast<std::uint32_t>(extents[2])};
}

TileCoord coordOf(const codegen::SimulatedTile& tile) {
  return TileCoord{static_cast<std::uint32_t>(tile[0]), static_cast<std::uint32_t>(tile[1]),
                   static_cast<std::uint32_t>(tile[2])};
}

std::vector<codegen::SimulatedTile> tilesOfGrid(const analysis::IslModel& model, const std::string& grid) {
  std::vector<codegen::SimulatedTile> tiles;
  for (const analysis::ConcreteTile& tile : analysis::tilesOf(model, model.grid(grid).domain)) {
    codegen::SimulatedTile t{0, 0, 0};
    for (std::size_t d = 0; d < tile.coordinates.size(); ++d) t[d] = tile.coordinates[d];
    tiles.push_back(t);
  }
  return tiles;
}

std::size_t producerIndexOf(const analysis::IslModel& model, const std::string& dependency, const std::string& producer) {
  const auto& producers = model.dependency(dependency).producers;
  for (std::size_t p = 0; p < producers.size(); ++p)
    if (producers[p].producer.grid == producer) return p;
  FAIL("no producer " << producer << " in " << dependency);
  return 0;
}

// Everything one bundled spec is checked with, at one set of parameter values.
struct BundledCase {
  Models models;
  codegen::Generation generation;
  int policiesChecked = 0;
  int ordersChecked = 0;
};

template <typename Policy>
void checkPolicy(BundledCase& c, const std::string& dependency, const std::string& producer,
                 const std::string& consumer, bool simulate) {
  const analysis::IslModel& model = *c.models.concrete;
  INFO(Policy::name << " at " << model.parameterValues().size() << " parameter values");
  const codegen::PolicyResult* proven = findPolicy(c.generation, Policy::name);
  REQUIRE(proven != nullptr);
  REQUIRE(proven->proof.proven);
  CHECK(model.dependency(dependency).dependency.consumerGrid == consumer);
  GridShape grid = shapeOf(model, producer);
  codegen::SimulatedTile extents = codegen::concreteExtents(model, producer);
  std::vector<codegen::SimulatedTile> tiles = tilesOfGrid(model, producer);
  REQUIRE(tiles.size() == grid.tileCount());

  // The compiled functions are the proven ones, tile by tile; semaphores are in range.
  std::uint32_t count = Policy::semaphoreCount(grid);
  CHECK(count == codegen::evaluate(proven->functions.semaphoreCount, tiles.front().data(), extents.data()));
  std::map<std::uint32_t, std::uint32_t> tilesPerSemaphore;
  for (const codegen::SimulatedTile& tile : tiles) {
    std::uint32_t s = Policy::sem(coordOf(tile), grid);
    REQUIRE(s < count);
    REQUIRE(s == codegen::evaluate(proven->functions.semaphore, tile.data(), extents.data()));
    REQUIRE(Policy::value(coordOf(tile), grid) ==
            codegen::evaluate(proven->functions.value, tile.data(), extents.data()));
    ++tilesPerSemaphore[s];
  }
  // For every producer tile a consumer reads (enumerated from the isl relation): value == |sem^-1(sem(p))|.
  std::size_t producerIndex = producerIndexOf(model, dependency, producer);
  std::set<codegen::SimulatedTile> read;
  for (const auto& [consumerTile, producers] : codegen::simulatedReads(model, dependency, producerIndex))
    read.insert(producers.begin(), producers.end());
  REQUIRE_FALSE(read.empty());
  for (const codegen::SimulatedTile& tile : read) {
    INFO("producer tile " << tile[0] << ", " << tile[1] << ", " << tile[2]);
    REQUIRE(Policy::value(coordOf(tile), grid) == tilesPerSemaphore[Policy::sem(coordOf(tile), grid)]);
  }

  if (simulate) {
    // The whole spec with this policy on its edge, TileSync elsewhere, row-major orders; 132 slots.
    codegen::SimulationSetup setup;
    setup.stages = codegen::simulatedStages(model, {});
    for (const spec::Dependency& d : model.spec().dependencies) {
      for (std::size_t p = 0; p < d.producers.size(); ++p) {
        if (d.name == dependency && p == producerIndex) {
          codegen::SimulatedPolicy policy;
          policy.name = Policy::name;
          policy.producerGrid = producer;
          policy.consumerGrid = consumer;
          policy.semaphoreCount = count;
          policy.sem = [grid](const codegen::SimulatedTile& t) { return Policy::sem(coordOf(t), grid); };
          policy.value = [grid](const codegen::SimulatedTile& t) { return Policy::value(coordOf(t), grid); };
          policy.reads = codegen::simulatedReads(model, dependency, producerIndex);
          setup.policies.push_back(std::move(policy));
        } else {
          GridShape other = shapeOf(model, d.producers[p].grid);
          codegen::SimulatedPolicy tileSync;
          tileSync.name = d.name + "<-" + d.producers[p].grid;
          tileSync.producerGrid = d.producers[p].grid;
          tileSync.consumerGrid = d.consumerGrid;
          tileSync.semaphoreCount = TileSync::semaphoreCount(other);
          tileSync.sem = [other](const codegen::SimulatedTile& t) { return TileSync::sem(coordOf(t), other); };
          tileSync.value = [](const codegen::SimulatedTile&) { return std::int64_t{1}; };
          tileSync.reads = codegen::simulatedReads(model, d.name, p);
          setup.policies.push_back(std::move(tileSync));
        }
      }
    }
    setup.slots = 132;
    codegen::SimulationResult result = codegen::simulate(setup);
    INFO(result.failure);
    CHECK(result.ok);
  }
  ++c.policiesChecked;
}

template <typename Order>
void checkOrder(BundledCase& c, const std::string& gridName) {
  const analysis::IslModel& model = *c.models.concrete;
  INFO(Order::name);
  const codegen::TileOrderResult* proven = nullptr;
  for (const auto& order : c.generation.orders)
    if (order.order.structName() == Order::name) proven = &order;
  REQUIRE(proven != nullptr);
  REQUIRE(proven->proof.proven);
  GridShape grid = shapeOf(model, gridName);
  codegen::SimulatedTile extents = codegen::concreteExtents(model, gridName);
  std::set<std::uint32_t> indices;
  for (const codegen::SimulatedTile& tile : tilesOfGrid(model, gridName)) {
    std::uint32_t index = Order::index(coordOf(tile), grid);
    REQUIRE(index < grid.tileCount());
    REQUIRE(index == codegen::evaluate(proven->order.index, tile.data(), extents.data()));
    indices.insert(index);
  }
  CHECK(indices.size() == grid.tileCount());
  ++c.ordersChecked;
}

BundledCase bundledCase(const std::string& path, const analysis::ParameterValues& overrides) {
  BundledCase c{buildModels(parseBundled(path), overrides), {}};
  c.generation = codegen::generate(c.models.proofModels(), {});
  return c;
}

// The golden header must be what the generator emits now (scripts/regen_golden.sh regenerates it).
void checkGoldenIsCurrent(const std::string& path, const std::string& goldenName) {
  BundledCase c = bundledCase(path, {});
  std::string emitted = codegen::emitHeader(c.generation, path);
  std::ifstream golden(std::string(CUSYNC_SOURCE_DIR) + "/tests/golden/" + goldenName, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(golden)), std::istreambuf_iterator<char>());
  CHECK(codegen::headerFileName(c.generation) == goldenName);
  CHECK(text == emitted);
}

}  // namespace

#define CUSYNC_CHECK_POLICY(P, dependency, producer, consumer) \
  checkPolicy<P>(c, dependency, producer, consumer, simulate);
#define CUSYNC_CHECK_ORDER(O, grid) checkOrder<O>(c, grid);

TEST_CASE("Golden headers are what cusyncgen emits for the bundled specs", "[bundled][golden]") {
  checkGoldenIsCurrent("examples/mlp/gpt3_mlp.dep", "gpt3_mlp.h");
  checkGoldenIsCurrent("examples/mlp/gpt3_mlp_fused.dep", "gpt3_mlp_fused.h");
  checkGoldenIsCurrent("examples/mlp/llama_mlp.dep", "llama_mlp.h");
  checkGoldenIsCurrent("examples/mlp/llama_mlp_fused.dep", "llama_mlp_fused.h");
  checkGoldenIsCurrent("examples/mlp/gpt3_mlp_skinny.dep", "gpt3_mlp_skinny.h");
  checkGoldenIsCurrent("examples/mlp/llama_mlp_skinny.dep", "llama_mlp_skinny.h");
  checkGoldenIsCurrent("examples/attention/attention.dep", "attention.h");
  checkGoldenIsCurrent("examples/attention/attention_decode.dep", "attention_decode.h");
  checkGoldenIsCurrent("examples/attention/attention_prompt.dep", "attention_prompt.h");
  checkGoldenIsCurrent("examples/conv2d/conv2d.dep", "conv2d.h");
  checkGoldenIsCurrent("examples/conv2d/conv2d_3x3.dep", "conv2d_3x3.h");
  checkGoldenIsCurrent("examples/conv2d/conv2d_bottleneck.dep", "conv2d_bottleneck.h");
  checkGoldenIsCurrent("examples/conv2d/conv2d_stride2.dep", "conv2d_stride2.h");
}

TEST_CASE("GPT-3 MLP header matches the isl model on every tile, for M = 128, 1024, 2048", "[bundled]") {
  for (std::int64_t m : {128, 1024, 2048}) {
    BundledCase c = bundledCase("examples/mlp/gpt3_mlp.dep", {{"M", m}});
    bool simulate = m == 1024;
    CUSYNC_GPT3_MLP_POLICIES(CUSYNC_CHECK_POLICY)
    CUSYNC_GPT3_MLP_TILE_ORDERS(CUSYNC_CHECK_ORDER)
    CHECK(c.policiesChecked == 2);
    CHECK(c.ordersChecked == 2);
  }
}

TEST_CASE("Fused GPT-3 MLP header (GEMM 2 split in k-ranges) matches the isl model on every tile, for M = 1, 64, 200",
          "[bundled]") {
  for (std::int64_t m : {1, 64, 200}) {
    BundledCase c = bundledCase("examples/mlp/gpt3_mlp_fused.dep", {{"M", m}});
    bool simulate = m == 64;
    CUSYNC_GPT3_MLP_FUSED_POLICIES(CUSYNC_CHECK_POLICY)
    CUSYNC_GPT3_MLP_FUSED_TILE_ORDERS(CUSYNC_CHECK_ORDER)
    // TileSync (one semaphore per GEMM-1 tile: what the fused kernel waits with) and RowSync.
    CHECK(c.policiesChecked == 2);
  }
  CHECK(std::string(cusync::generated::gpt3_mlp_fused::Dep_dep_g1_TileSync::name) == "Dep_dep_g1_TileSync");
}

TEST_CASE("Fused LLaMA MLP header (paired SwiGLU epilogue, GEMM 2 split in k-ranges) matches the isl model on every "
          "tile, for M = 1, 64, 300",
          "[bundled]") {
  for (std::int64_t m : {1, 64, 300}) {
    BundledCase c = bundledCase("examples/mlp/llama_mlp_fused.dep", {{"M", m}});
    bool simulate = m == 64;
    CUSYNC_LLAMA_MLP_FUSED_POLICIES(CUSYNC_CHECK_POLICY)
    CUSYNC_LLAMA_MLP_FUSED_TILE_ORDERS(CUSYNC_CHECK_ORDER)
    // TileSync (one semaphore per S tile: what the fused kernel waits with) and RowSync.
    CHECK(c.policiesChecked == 2);
  }
  CHECK(std::string(cusync::generated::llama_mlp_fused::Dep_dep_g1_TileSync::name) == "Dep_dep_g1_TileSync");
}

TEST_CASE("Skinny MLP headers (M <= 8, 32-row tiles, GEMM 2 in k-ranges) match the isl model on every tile, for "
          "M = 1, 8",
          "[bundled]") {
  for (std::int64_t m : {1, 8}) {
    bool simulate = m == 8;
    {
      BundledCase c = bundledCase("examples/mlp/gpt3_mlp_skinny.dep", {{"M", m}});
      CUSYNC_GPT3_MLP_SKINNY_POLICIES(CUSYNC_CHECK_POLICY)
      CUSYNC_GPT3_MLP_SKINNY_TILE_ORDERS(CUSYNC_CHECK_ORDER)
      CHECK(c.policiesChecked == 2);  // TileSync (what the skinny kernel waits with) and RowSync
    }
    {
      BundledCase c = bundledCase("examples/mlp/llama_mlp_skinny.dep", {{"M", m}});
      CUSYNC_LLAMA_MLP_SKINNY_POLICIES(CUSYNC_CHECK_POLICY)
      CUSYNC_LLAMA_MLP_SKINNY_TILE_ORDERS(CUSYNC_CHECK_ORDER)
      CHECK(c.policiesChecked == 2);
    }
  }
}

TEST_CASE("LLaMA MLP header matches the isl model on every tile, for M = 1, 128, 2048", "[bundled]") {
  for (std::int64_t m : {1, 128, 2048}) {
    BundledCase c = bundledCase("examples/mlp/llama_mlp.dep", {{"M", m}});
    bool simulate = m == 128;
    CUSYNC_LLAMA_MLP_POLICIES(CUSYNC_CHECK_POLICY)
    CUSYNC_LLAMA_MLP_TILE_ORDERS(CUSYNC_CHECK_ORDER)
    // swiglu (g1 -> gs: the gate tile and the up tile F/(8*TileN) to its right): TileSync, StridedSync, RowSync;
    // down (gs -> g2: a whole row of S): TileSync, RowSync.
    CHECK(c.policiesChecked == 5);
    CHECK(c.ordersChecked == 4);
  }
  using namespace cusync::generated::llama_mlp;
  CHECK(std::string(Dep_swiglu_g1_TileSync::name) == "Dep_swiglu_g1_TileSync");
  CHECK(std::string(Dep_down_gs_TileSync::name) == "Dep_down_gs_TileSync");
  CHECK(std::string(Dep_down_gs_RowSync::name) == "Dep_down_gs_RowSync");
}

TEST_CASE("Attention header matches the isl model on every tile, for B = 1, 2, 8", "[bundled]") {
  for (std::int64_t b : {1, 2, 8}) {
    BundledCase c = bundledCase("examples/attention/attention.dep", {{"B", b}});
    bool simulate = b == 2;
    CUSYNC_ATTENTION_POLICIES(CUSYNC_CHECK_POLICY)
    CUSYNC_ATTENTION_TILE_ORDERS(CUSYNC_CHECK_ORDER)
    CHECK(c.policiesChecked >= 11);
    CHECK(c.ordersChecked >= 6);
  }
  // The acceptance: TileSync, RowSync and StridedSync policies and the grouped producer order.
  using namespace cusync::generated::attention;
  CHECK(std::string(Dep_dep1P_g1_StridedSync::name) == "Dep_dep1P_g1_StridedSync");
  CHECK(std::string(Dep_dep1P_g1_TileSync::name) == "Dep_dep1P_g1_TileSync");
  CHECK(std::string(Dep_dep23_gT_RowSync::name) == "Dep_dep23_gT_RowSync");
  CHECK(std::string(Order_g1_GroupedBy_StridedSync_dep1P::name) == "Order_g1_GroupedBy_StridedSync_dep1P");
}

// The attention chain the example runs (examples/attention): the QKV GEMM posts under StridedSync (the Q, K and V
// tiles of one head share a semaphore), T under TileSync or RowSync, for both models.
TEST_CASE("Attention decode header (q, k, v of one token row tile) matches the isl model on every tile, for B = 1, "
          "4, 64",
          "[bundled]") {
  for (std::int64_t b : {1, 4, 64}) {
    BundledCase c = bundledCase("examples/attention/attention_decode.dep", {{"B", b}});
    bool simulate = b == 4;
    CUSYNC_ATTENTION_DECODE_POLICIES(CUSYNC_CHECK_POLICY)
    CUSYNC_ATTENTION_DECODE_TILE_ORDERS(CUSYNC_CHECK_ORDER)
    // attend (per model): TileSync, StridedSync, RowSync; project: TileSync, ColumnSync, RowSync, RowColumnSync.
    CHECK(c.policiesChecked == 14);
  }
  using namespace cusync::generated::attention_decode;
  // The stride is the heads per GPU: 12 for GPT-3, 8 for LLaMA; one semaphore per head and row tile, three posts.
  CHECK(Dep_attendGpt3_qkvGpt3_StridedSync::semaphoreCount(GridShape{36, 1, 1}) == 12);
  CHECK(Dep_attendGpt3_qkvGpt3_StridedSync::value(TileCoord{25, 0, 0}, GridShape{36, 1, 1}) == 3);
  CHECK(Dep_attendLlama_qkvLlama_StridedSync::sem(TileCoord{17, 0, 0}, GridShape{24, 1, 1}) == 1);
}

TEST_CASE("Attention prompt header (causal: K and V of every earlier row tile of the sequence, S = 512, 1024, 2048) "
          "matches the isl model on every tile, for B*S = 512, 1536, 4096 tokens",
          "[bundled]") {
  for (std::int64_t rows : {4, 12, 32}) {
    BundledCase c = bundledCase("examples/attention/attention_prompt.dep", {{"Rows", rows}});
    bool simulate = rows == 12;
    CUSYNC_ATTENTION_PROMPT_POLICIES(CUSYNC_CHECK_POLICY)
    CUSYNC_ATTENTION_PROMPT_TILE_ORDERS(CUSYNC_CHECK_ORDER)
    // attend (per model and sequence length): TileSync, StridedSync, RowSync; attendNarrow (QKV tiles of 96
    // columns, which do not align with heads): TileSync, RowSync; attendWide (GPT-3's QKV in 144-column tiles, per
    // sequence length): TileSync, RowSync; project: TileSync, RowSync.
    CHECK(c.policiesChecked == 40);
  }
  using namespace cusync::generated::attention_prompt;
  CHECK(std::string(Producer_qkvGpt3_StridedSync::name) == "Producer_qkvGpt3_StridedSync");
  CHECK(std::string(Order_qkvLlama_GroupedBy_StridedSync_attendLlamaS512::name) ==
        "Order_qkvLlama_GroupedBy_StridedSync_attendLlamaS512");
  // The grouped order puts the Q, K and V tiles of one head back to back: GPT-3, row tile 1, head 5.
  const GridShape qkv{36, 8, 1};
  using Order = Order_qkvGpt3_GroupedBy_StridedSync_attendGpt3S512;
  CHECK(Order::index(TileCoord{5 + 12, 1, 0}, qkv) == Order::index(TileCoord{5, 1, 0}, qkv) + 1);
  CHECK(Order::index(TileCoord{5 + 24, 1, 0}, qkv) == Order::index(TileCoord{5, 1, 0}, qkv) + 2);
  // The producer policy the QKV GEMM posts under is the per-dependency StridedSync of every sequence length.
  for (std::uint32_t rows : {4u, 16u, 32u})
    for (std::uint32_t y = 0; y < rows; ++y)
      for (std::uint32_t x = 0; x < 36; ++x) {
        const GridShape grid{36, rows, 1};
        const TileCoord tile{x, y, 0};
        CHECK(Producer_qkvGpt3_StridedSync::sem(tile, grid) == Dep_attendGpt3S2048_qkvGpt3_StridedSync::sem(tile, grid));
        CHECK(Producer_qkvGpt3_StridedSync::value(tile, grid) ==
              Dep_attendGpt3S1024_qkvGpt3_StridedSync::value(tile, grid));
      }
  // QKV tiles of 96 columns: StridedSync does not hold (a tile may serve two heads, or Q of one and K of another);
  // the QKV GEMM posts under RowSync, one semaphore per row tile that counts every tile of the row.
  for (std::uint32_t rows : {4u, 32u}) {
    const GridShape narrow{48, rows, 1};
    CHECK(Producer_qkvNarrowGpt3_RowSync::semaphoreCount(narrow) == rows);
    CHECK(Producer_qkvNarrowGpt3_RowSync::sem(TileCoord{47, rows - 1, 0}, narrow) == rows - 1);
    CHECK(Producer_qkvNarrowGpt3_RowSync::value(TileCoord{0, 0, 0}, narrow) == 48);
  }
  CHECK(parameters::QkvTileN == 96);
  // GPT-3's QKV in 144-column tiles: 32 column tiles (cuBLAS's tiling), under RowSync too.
  for (std::uint32_t rows : {4u, 32u}) {
    const GridShape wide{32, rows, 1};
    CHECK(Producer_qkvWideGpt3_RowSync::semaphoreCount(wide) == rows);
    CHECK(Producer_qkvWideGpt3_RowSync::sem(TileCoord{31, rows - 1, 0}, wide) == rows - 1);
    CHECK(Producer_qkvWideGpt3_RowSync::value(TileCoord{0, 0, 0}, wide) == 32);
  }
  CHECK(parameters::QkvWideTileN == 144);
}

TEST_CASE("Conv2D header matches the isl model on every tile, for B = 1, 4", "[bundled]") {
  for (std::int64_t b : {1, 4}) {
    BundledCase c = bundledCase("examples/conv2d/conv2d.dep", {{"B", b}});
    bool simulate = b == 1;
    CUSYNC_CONV2D_POLICIES(CUSYNC_CHECK_POLICY)
    CUSYNC_CONV2D_TILE_ORDERS(CUSYNC_CHECK_ORDER)
    CHECK(c.policiesChecked == 2);
  }
}

// The true convolution dependencies (halo ranges with min, max and floor division; tests/policy/conv_halo_test.cpp
// checks them against the stencil). B = 3 leaves the stride-2 layers' last tile partial (3*784 = 36.75 tiles).
TEST_CASE("Conv2D halo headers (3x3, bottleneck, stride 2) match the isl model on every tile, for B = 1, 3",
          "[bundled]") {
  for (std::int64_t b : {1, 3}) {
    bool simulate = b == 1;
    {
      BundledCase c = bundledCase("examples/conv2d/conv2d_3x3.dep", {{"B", b}});
      CUSYNC_CONV2D_3X3_POLICIES(CUSYNC_CHECK_POLICY)
      CUSYNC_CONV2D_3X3_TILE_ORDERS(CUSYNC_CHECK_ORDER)
      CHECK(c.policiesChecked == 2);  // TileSync, RowSync
    }
    {
      BundledCase c = bundledCase("examples/conv2d/conv2d_bottleneck.dep", {{"B", b}});
      CUSYNC_CONV2D_BOTTLENECK_POLICIES(CUSYNC_CHECK_POLICY)
      CUSYNC_CONV2D_BOTTLENECK_TILE_ORDERS(CUSYNC_CHECK_ORDER)
      CHECK(c.policiesChecked == 4);  // TileSync and RowSync for each of the two dependencies
    }
    {
      BundledCase c = bundledCase("examples/conv2d/conv2d_stride2.dep", {{"B", b}});
      CUSYNC_CONV2D_STRIDE2_POLICIES(CUSYNC_CHECK_POLICY)
      CUSYNC_CONV2D_STRIDE2_TILE_ORDERS(CUSYNC_CHECK_ORDER)
      CHECK(c.policiesChecked == 4);
    }
  }
  // g1 of the stride-2 spec feeds both consumers: it posts under one policy that serves both.
  using namespace cusync::generated::conv2d_stride2;
  CHECK(std::string(Producer_g1_RowSync::name) == "Producer_g1_RowSync");
}

namespace {

// A simulated policy from a compiled policy struct.
template <typename Policy>
codegen::SimulatedPolicy compiled(const analysis::IslModel& model, const std::string& dependency,
                                  const std::string& producer) {
  GridShape grid = shapeOf(model, producer);
  codegen::SimulatedPolicy policy;
  policy.name = Policy::name;
  policy.producerGrid = producer;
  policy.consumerGrid = model.dependency(dependency).dependency.consumerGrid;
  policy.semaphoreCount = Policy::semaphoreCount(grid);
  policy.sem = [grid](const codegen::SimulatedTile& t) { return Policy::sem(coordOf(t), grid); };
  policy.value = [grid](const codegen::SimulatedTile& t) { return Policy::value(coordOf(t), grid); };
  policy.reads = codegen::simulatedReads(model, dependency, producerIndexOf(model, dependency, producer));
  return policy;
}

template <typename Order>
void useOrder(std::vector<codegen::SimulatedStage>& stages, const analysis::IslModel& model, const std::string& grid) {
  GridShape shape = shapeOf(model, grid);
  for (codegen::SimulatedStage& stage : stages)
    if (stage.grid == grid)
      stage.order = [shape](const codegen::SimulatedTile& t) { return std::int64_t{Order::index(coordOf(t), shape)}; };
}

}  // namespace

TEST_CASE("Attention header: the whole chain runs with its grouped and chain orders (compiled functions)",
          "[bundled][simulation]") {
  using namespace cusync::generated::attention;
  for (std::int64_t b : {1, 3}) {
    BundledCase c = bundledCase("examples/attention/attention.dep", {{"B", b}});
    const analysis::IslModel& model = *c.models.concrete;
    for (int variant = 0; variant < 2; ++variant) {
      codegen::SimulationSetup setup;
      setup.stages = codegen::simulatedStages(model, {});
      // Variant 0: g1 grouped for the row-major dot product; variant 1: the whole chain column-first.
      if (variant == 0) {
        useOrder<Order_g1_GroupedBy_StridedSync_dep1P>(setup.stages, model, "g1");
      } else {
        useOrder<Order_g1_Chain_StridedSync_dep1P_GroupedBy_ColumnSync_depPR>(setup.stages, model, "g1");
        useOrder<Order_gP_GroupedBy_ColumnSync_depPR>(setup.stages, model, "gP");
      }
      setup.policies = {compiled<Dep_dep1P_g1_StridedSync>(model, "dep1P", "g1"),
                        compiled<Dep_depPR_gP_ColumnSync>(model, "depPR", "gP"),
                        compiled<Dep_depTR1_gR_TileSync>(model, "depTR1", "gR"),
                        compiled<Dep_depTR1_g1_TileSync>(model, "depTR1", "g1"),
                        compiled<Dep_dep23_gT_RowSync>(model, "dep23", "gT")};
      for (std::int64_t slots : {1, 7, 132}) {
        setup.slots = slots;
        codegen::SimulationResult result = codegen::simulate(setup);
        INFO("B = " << b << ", variant " << variant << ", " << slots << " slots: " << result.failure);
        CHECK(result.ok);
      }
    }
  }
}
