// The convolution specs against the convolution itself. A spec's Ranges are the user's claim about which producer
// tiles a consumer tile reads; here that claim is checked against the stencil of an implicit-GeMM fprop
// convolution, derived without the spec: consumer pixel (b, p, q) and filter tap (r, s) read the producer's pixel
// (b, p*stride - padding + r, q*stride - padding + s) when it lies inside the image (CUTLASS's fprop indexing), and
// all of its channels. Twice, independently: by brute force over pixels and taps (plain C++, no isl), and as an isl
// relation whose existential pixel variables isl projects to tiles, for every admissible B at once. Then the policies
// cusyncgen proves for the specs are checked to make a consumer wait for every tile of its stencil
// (codegen::proveCovers), and the paper's Tile(x*s, y) and a too-small halo are shown to be refused with a
// counterexample.
#include "model_fixture.h"

#include <cusync/codegen/policy_functions.h>
#include <cusync/codegen/policy_prover.h>
#include <cusync/dsl/parser.h>

#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>

using namespace cusync;
using namespace cusync::policytest;

namespace {

// One consumer convolution reading its producer's output; both are implicit GeMMs with TileM-pixel row tiles.
struct ConvRead {
  std::string dependency, consumerGrid, producerGrid;
  std::int64_t producerHeight, producerWidth;  // the producer's output image, the consumer's input
  std::int64_t consumerHeight, consumerWidth;
  std::int64_t filter, stride, padding;
  std::int64_t tileM;
};

// The bundled specs' layers, with the sizes their comments state (each spec's tile sizes are 64 pixels).
const ConvRead kResNet3x3{"dep", "g2", "g1", 56, 56, 56, 56, 3, 1, 1, 64};
const ConvRead kBottleneck3x3{"dep3x3", "g2", "g1", 56, 56, 56, 56, 3, 1, 1, 64};
const ConvRead kBottleneck1x1{"dep1x1", "g3", "g2", 56, 56, 56, 56, 1, 1, 0, 64};
const ConvRead kStride2For3x3{"dep3x3", "g2", "g1", 56, 56, 28, 28, 3, 2, 1, 64};
const ConvRead kStride2For1x1{"dep1x1", "g3", "g1", 56, 56, 28, 28, 1, 2, 0, 64};

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Brute force: the producer pixel tiles each consumer pixel tile reads, for `batch` images.
std::vector<std::set<std::int64_t>> stencilRowTiles(const ConvRead& conv, std::int64_t batch) {
  const std::int64_t consumerPixels = batch * conv.consumerHeight * conv.consumerWidth;
  std::vector<std::set<std::int64_t>> tiles(static_cast<std::size_t>(ceilDiv(consumerPixels, conv.tileM)));
  for (std::int64_t m = 0; m < consumerPixels; ++m) {
    std::int64_t b = m / (conv.consumerHeight * conv.consumerWidth);
    std::int64_t p = m / conv.consumerWidth % conv.consumerHeight, q = m % conv.consumerWidth;
    for (std::int64_t r = 0; r < conv.filter; ++r)
      for (std::int64_t s = 0; s < conv.filter; ++s) {
        std::int64_t h = p * conv.stride - conv.padding + r, w = q * conv.stride - conv.padding + s;
        if (h < 0 || h >= conv.producerHeight || w < 0 || w >= conv.producerWidth) continue;  // zero padding
        std::int64_t n = (b * conv.producerHeight + h) * conv.producerWidth + w;
        tiles[static_cast<std::size_t>(m / conv.tileM)].insert(n / conv.tileM);
      }
  }
  return tiles;
}

// The same stencil as an isl relation between the tile grids, for every B the spec admits ([B] -> {...}).
isl::map stencilRelation(isl::ctx ctx, const ConvRead& conv, std::int64_t producerColumnTiles,
                         std::int64_t consumerColumnTiles) {
  const std::string text = fmt::format(
      "[B] -> {{ {C}[x, y] -> {P}[xp, yp] : 0 <= x < {X2} and 0 <= xp < {X1} and exists (m, b, p, q, r, s, n : "
      "y*{T} <= m < (y + 1)*{T} and 0 <= b < B and 0 <= p < {P2} and 0 <= q < {Q2} and m = (b*{P2} + p)*{Q2} + q "
      "and 0 <= r < {R} and 0 <= s < {R} and 0 <= {S}p - {D} + r < {P1} and 0 <= {S}q - {D} + s < {Q1} "
      "and n = (b*{P1} + {S}p - {D} + r)*{Q1} + {S}q - {D} + s and yp*{T} <= n < (yp + 1)*{T}) }}",
      fmt::arg("C", conv.consumerGrid), fmt::arg("P", conv.producerGrid), fmt::arg("X1", producerColumnTiles),
      fmt::arg("X2", consumerColumnTiles), fmt::arg("T", conv.tileM), fmt::arg("P1", conv.producerHeight),
      fmt::arg("Q1", conv.producerWidth), fmt::arg("P2", conv.consumerHeight), fmt::arg("Q2", conv.consumerWidth),
      fmt::arg("R", conv.filter), fmt::arg("S", conv.stride), fmt::arg("D", conv.padding));
  return isl::map(ctx, text);
}

spec::Spec parseText(const std::string& text, const std::string& file) {
  dsl::Diagnostics diagnostics;
  auto spec = dsl::parseSpec(text, file, diagnostics);
  INFO(diagnosticsText(diagnostics));
  REQUIRE(spec.has_value());
  return *spec;
}

std::string readSpec(const std::string& relativePath) {
  std::ifstream in(std::string(CUSYNC_SOURCE_DIR) + "/" + relativePath);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::int64_t extentOf(const analysis::IslModel& concrete, const std::string& grid, int dimension) {
  return concrete.grid(grid).extentValues.at(static_cast<std::size_t>(dimension)).value();
}

using TileReads = std::map<std::vector<std::int64_t>, std::set<std::vector<std::int64_t>>>;

// At one bound B: the spec's relation as consumer tile -> producer tiles, and the stencil as the same map (a
// consumer tile reads every producer column tile of its stencil's row tiles).
std::pair<TileReads, TileReads> listedAndStencilReads(const spec::Spec& spec, const ConvRead& conv,
                                                      std::int64_t batch) {
  Models models = buildModels(spec, {{"B", batch}});
  TileReads listed, stencil;
  const auto& dependency = models.concrete->dependency(conv.dependency);
  for (const analysis::TilePair& pair : analysis::tilePairsOf(*models.concrete, dependency.producers.at(0).relation))
    listed[pair.consumer.coordinates].insert(pair.producer.coordinates);
  const std::int64_t producerColumns = extentOf(*models.concrete, conv.producerGrid, 0);
  const std::int64_t consumerColumns = extentOf(*models.concrete, conv.consumerGrid, 0);
  auto rows = stencilRowTiles(conv, batch);
  REQUIRE(static_cast<std::int64_t>(rows.size()) == extentOf(*models.concrete, conv.consumerGrid, 1));
  for (std::int64_t y = 0; y < static_cast<std::int64_t>(rows.size()); ++y)
    for (std::int64_t x = 0; x < consumerColumns; ++x)
      for (std::int64_t row : rows[static_cast<std::size_t>(y)])
        for (std::int64_t column = 0; column < producerColumns; ++column) stencil[{x, y}].insert({column, row});
  return {listed, stencil};
}

struct SpecCase {
  const char* path;
  std::vector<ConvRead> layers;
};

const std::vector<SpecCase>& bundledConvSpecs() {
  static const std::vector<SpecCase> cases{{"examples/conv2d/conv2d_3x3.dep", {kResNet3x3}},
                                           {"examples/conv2d/conv2d_bottleneck.dep", {kBottleneck3x3, kBottleneck1x1}},
                                           {"examples/conv2d/conv2d_stride2.dep", {kStride2For3x3, kStride2For1x1}}};
  return cases;
}

// The tiles a spec's relation lists for consumer tiles, as isl says: the symbolic model's relation.
isl::map listedRelation(const analysis::IslModel& symbolic, const ConvRead& conv) {
  return symbolic.dependency(conv.dependency).producers.at(0).relation.intersect_params(symbolic.context());
}

codegen::PolicyCandidate candidateNamed(const codegen::Generation& generation, const std::string& structName) {
  const codegen::PolicyResult* policy = findPolicy(generation, structName);
  INFO(structName);
  REQUIRE(policy != nullptr);
  REQUIRE(policy->proof.proven);
  return policy->candidate;
}

}  // namespace

TEST_CASE("the brute-force stencil: a 3x3 tile at 56 x 56 reads the pixel tiles before and after it, never across "
          "images",
          "[conv]") {
  // Tile 1 = pixels 64..127 = row 1 from column 8 to row 2 column 15: it reads row 0 from column 7 to row 3
  // column 16, pixels 7..184, tiles 0..2.
  auto tiles = stencilRowTiles(kResNet3x3, 2);
  REQUIRE(tiles.size() == 98);
  CHECK(tiles[1] == std::set<std::int64_t>{0, 1, 2});
  // Tile 49 is image 1's first: rows 0 and 1 of image 1 and nothing of image 0, whose last tile is 48.
  CHECK(*tiles[49].begin() == 49);
  CHECK(*tiles[48].rbegin() == 48);
  // A 1x1 layer reads its own pixel tile; stride 2 reads 4 times as far.
  auto pointwise = stencilRowTiles(kBottleneck1x1, 1);
  for (std::size_t y = 0; y < pointwise.size(); ++y) CHECK(pointwise[y] == std::set<std::int64_t>{std::int64_t(y)});
  auto strided = stencilRowTiles(kStride2For1x1, 1);
  REQUIRE(strided.size() == 13);  // 784 pixels: the last tile holds 16
  CHECK(*strided[1].begin() == (2 * 64 + 2 * 28 * (64 / 28)) / 64);
}

TEST_CASE("each conv spec reads exactly the tiles its layer's stencil touches, for every B (brute force)", "[conv]") {
  for (const SpecCase& c : bundledConvSpecs()) {
    spec::Spec spec = parseText(readSpec(c.path), c.path);
    for (const ConvRead& conv : c.layers)
      for (std::int64_t batch = 1; batch <= 32; ++batch) {
        INFO(c.path << " " << conv.dependency << " with B = " << batch);
        auto [listed, stencil] = listedAndStencilReads(spec, conv, batch);
        // Equal: the spec neither misses a tile the convolution reads (unsound) nor adds one (waits too long).
        REQUIRE(listed.size() == stencil.size());
        for (const auto& [consumer, producers] : stencil) {
          INFO("consumer tile (" << consumer[0] << ", " << consumer[1] << ")");
          REQUIRE(listed.count(consumer) == 1);
          CHECK(listed.at(consumer) == producers);
        }
      }
  }
}

TEST_CASE("each conv spec's relation equals the stencil's isl relation for all B in [1, 32] at once", "[conv]") {
  for (const SpecCase& c : bundledConvSpecs()) {
    Models models = buildModels(parseText(readSpec(c.path), c.path));
    for (const ConvRead& conv : c.layers) {
      INFO(c.path << " " << conv.dependency);
      isl::map stencil =
          stencilRelation(models.symbolic->ctx(), conv, extentOf(*models.concrete, conv.producerGrid, 0),
                          extentOf(*models.concrete, conv.consumerGrid, 0))
              .intersect_params(models.symbolic->context());
      isl::map listed = listedRelation(*models.symbolic, conv);
      CHECK(stencil.is_subset(listed));  // sound: every tile the stencil reads is listed
      CHECK(listed.is_subset(stencil));  // exact: nothing else is
    }
  }
}

TEST_CASE("every policy cusyncgen proves for a conv spec makes a consumer wait for its whole stencil", "[conv]") {
  for (const SpecCase& c : bundledConvSpecs()) {
    Models models = buildModels(parseText(readSpec(c.path), c.path));
    codegen::Generation generation = codegen::generate(models.proofModels(), codegen::OptimizationOptions{});
    REQUIRE(generation.allProven());
    for (const ConvRead& conv : c.layers) {
      isl::map stencil = stencilRelation(models.symbolic->ctx(), conv, extentOf(*models.concrete, conv.producerGrid, 0),
                                         extentOf(*models.concrete, conv.consumerGrid, 0));
      std::set<std::string> names;
      for (const codegen::PolicyResult* policy : generation.emittedPolicies()) {
        if (policy->candidate.dependency != conv.dependency) continue;
        names.insert(policy->candidate.policy);
        INFO(c.path << " " << policy->candidate.structName());
        codegen::Proof covers =
            codegen::proveCovers(*models.symbolic, policy->candidate, policy->functions, stencil);
        CHECK(covers.scope == codegen::ProofScope::AllParameterValues);
        CHECK(covers.failure == "");
        CHECK(covers.proven);
        // RowSync's consumers read whole pixel tiles, so they wait for nothing they do not read.
        CHECK(policy->proof.exact);
      }
      CHECK(names == std::set<std::string>{"TileSync", "RowSync"});
    }
  }
}

// The paper's Figure 5c relation, Tile(x*s, y), on the 3x3 chain's grids (s = 1: same channel count, so its
// one-semaphore-per-tile policy is plain TileSync): a consumer tile waits for one producer tile. Under TileSync it misses the other channel tile and the rows above and below;
// under RowSync (whole rows) still the halo rows.
TEST_CASE("the paper's Tile(x*s, y) misses the 3x3 halo: refused against the stencil with a counterexample",
          "[conv]") {
  std::string text = readSpec("examples/conv2d/conv2d_3x3.dep");
  std::size_t halo = text.find("ForAll halo");
  REQUIRE(halo != std::string::npos);
  text = text.substr(0, halo) + "Param s = 1;\nDep dep({g2, cons}, {g1, Tile(x*s, y)});\n";
  Models models = buildModels(parseText(text, "conv2d_3x3_paper.dep"));
  codegen::Generation generation = codegen::generate(models.proofModels(), codegen::OptimizationOptions{});
  isl::map stencil = stencilRelation(models.symbolic->ctx(), kResNet3x3, 2, 2);
  for (const char* name : {"Dep_dep_g1_TileSync", "Dep_dep_g1_RowSync"}) {
    INFO(name);
    const codegen::PolicyResult* policy = findPolicy(generation, name);
    REQUIRE(policy != nullptr);
    CHECK(policy->proof.proven);  // sound for the relation it was given...
    codegen::Proof covers = codegen::proveCovers(*models.symbolic, policy->candidate, policy->functions, stencil);
    CHECK_FALSE(covers.proven);  // ...which is not what the convolution reads
    CHECK_THAT(covers.failure, Catch::Contains("reads a producer tile it does not wait for"));
    CHECK_THAT(covers.counterexample, Catch::Contains("g2[") && Catch::Contains("g1["));
  }
  // What RowSync leaves out are halo rows: every missing tile lies in a producer row other than the consumer's.
  isl::map missing = stencil.intersect_params(models.symbolic->context())
                         .subtract(listedRelation(*models.symbolic, kResNet3x3).apply_range(
                             isl::map(models.symbolic->ctx(), "[B] -> { g1[x, y] -> g1[xp, y] }")));
  REQUIRE_FALSE(missing.is_empty());
  isl::map sameRow(models.symbolic->ctx(), "[B] -> { g2[x, y] -> g1[xp, y] }");
  CHECK(missing.intersect(sameRow).is_empty());
}

// A halo that forgets the row above (Range from the consumer's own pixel tile): in bounds, and every policy is
// sound for the relation, but a consumer that reads the row above does not wait for it. proveCovers names a consumer
// tile, the tile it misses, and B.
TEST_CASE("a too-small halo range is refused against the stencil with a counterexample", "[conv]") {
  std::string text = readSpec("examples/conv2d/conv2d_3x3.dep");
  const std::string lower = "Range(max(y*TileM/(P*Q)*(P*Q), y*TileM - Q - min(y*TileM % Q, 1))/TileM,";
  std::size_t at = text.find(lower);
  REQUIRE(at != std::string::npos);
  text.replace(at, lower.size(), "Range(y,");
  Models models = buildModels(parseText(text, "conv2d_3x3_no_row_above.dep"));
  codegen::Generation generation = codegen::generate(models.proofModels(), codegen::OptimizationOptions{});
  REQUIRE(generation.allProven());
  isl::map stencil = stencilRelation(models.symbolic->ctx(), kResNet3x3, 2, 2);
  const codegen::PolicyResult* row = findPolicy(generation, "Dep_dep_g1_RowSync");
  REQUIRE(row != nullptr);
  codegen::Proof covers = codegen::proveCovers(*models.symbolic, row->candidate, row->functions, stencil);
  REQUIRE_FALSE(covers.proven);
  CHECK_THAT(covers.counterexample, Catch::Contains("B = "));
  CHECK_THAT(covers.counterexample, Catch::Contains("g2[") && Catch::Contains("g1["));
  // Every tile it misses is in the row above the consumer's.
  isl::map missing = stencil.intersect_params(models.symbolic->context())
                         .subtract(listedRelation(*models.symbolic, kResNet3x3));
  REQUIRE_FALSE(missing.is_empty());
  CHECK(missing.is_subset(isl::map(models.symbolic->ctx(), "[B] -> { g2[x, y] -> g1[xp, y - 1] }")));
  // The correct spec, same grids: covered.
  Models correct = buildModels(parseText(readSpec("examples/conv2d/conv2d_3x3.dep"), "conv2d_3x3.dep"));
  codegen::Generation proven = codegen::generate(correct.proofModels(), codegen::OptimizationOptions{});
  const codegen::PolicyResult* correctRow = findPolicy(proven, "Dep_dep_g1_RowSync");
  REQUIRE(correctRow != nullptr);
  CHECK(codegen::proveCovers(*correct.symbolic, correctRow->candidate, correctRow->functions,
                             stencilRelation(correct.symbolic->ctx(), kResNet3x3, 2, 2))
            .proven);
}

// The spec's comment: with tiles shorter than an image row the contiguous range is still sound but waits for tiles
// the stencil does not touch (whole tiles between two rows of the halo, or the start of the first row).
TEST_CASE("with TileM < Q the 3x3 halo range over-approximates the stencil but still covers it, for all B",
          "[conv]") {
  std::string text = readSpec("examples/conv2d/conv2d_3x3.dep");
  const std::string tiles = "Param TileM = 64, TileN = 32;";
  std::size_t at = text.find(tiles);
  REQUIRE(at != std::string::npos);
  text.replace(at, tiles.size(), "Param TileM = 16, TileN = 32;");
  Models models = buildModels(parseText(text, "conv2d_3x3_short_tiles.dep"));
  ConvRead shortTiles = kResNet3x3;
  shortTiles.tileM = 16;
  isl::map stencil =
      stencilRelation(models.symbolic->ctx(), shortTiles, 2, 2).intersect_params(models.symbolic->context());
  isl::map listed = listedRelation(*models.symbolic, shortTiles);
  CHECK(stencil.is_subset(listed));
  CHECK_FALSE(listed.is_subset(stencil));
}
