// The convolution chains conv2d_chain_example runs (examples/conv2d/conv_models.h): the cuSync paper's Table II
// layers of ResNet-38 and VGG-19, ResNet's bottleneck and stride-2 blocks, each a well-formed chain; and, where the
// spec compiler is built, that the policies cusyncgen proves for the bottleneck and stride-2 specs are the very
// functions the example's kernels are instantiated with (conv2d_3x3.dep's), on grids of every chain. Host only.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "conv_models.h"

#if defined(CUSYNC_HAVE_CONV_POLICIES)
#include "conv2d_3x3.h"
#include "conv2d_bottleneck.h"
#include "conv2d_stride2.h"
#include "cusync/tile.h"
#endif

using namespace cusync::examples;

namespace {

std::vector<int> stageCounts(const std::string& model) {
  std::vector<int> counts;
  for (const ConvChainSpec& chain : convModelLayers(model)) counts.push_back(int(chain.stages.size()));
  return counts;
}

}  // namespace

TEST_CASE("ResNet-38 and VGG-19 layers are Table II's shapes with its convolutions per layer") {
  const std::vector<std::pair<int, int>> table = {{56, 64}, {28, 128}, {14, 256}, {7, 512}};
  for (const std::string model : {"resnet", "vgg"}) {
    const std::vector<ConvChainSpec> layers = convModelLayers(model);
    REQUIRE(layers.size() == table.size());
    for (std::size_t i = 0; i < table.size(); ++i) {
      CHECK(layers[i].width == table[i].first);
      CHECK(layers[i].channels == table[i].second);
      for (std::size_t s = 0; s < layers[i].stages.size(); ++s) {
        const ConvStageSpec& stage = layers[i].stages[s];
        CHECK(stage.filter == 3);
        CHECK(stage.stride == 1);
        CHECK(stage.height == table[i].first);
        CHECK(stage.inChannels == table[i].second);
        CHECK(stage.outChannels == table[i].second);
        CHECK(stage.producer == int(s) - 1);  // a chain: each stage reads the previous one
      }
    }
  }
  CHECK(stageCounts("resnet") == std::vector<int>{2, 2, 2, 2});
  CHECK(stageCounts("vgg") == std::vector<int>{2, 2, 4, 4});
}

TEST_CASE("The bottleneck is 1x1 (4C -> C), 3x3 (C -> C), 1x1 (C -> 4C), each reading the previous") {
  for (const ConvChainSpec& chain : convModelLayers("bottleneck")) {
    REQUIRE(chain.stages.size() == 3);
    const int c = chain.channels;
    CHECK(chain.stages[0].filter == 1);
    CHECK(chain.stages[0].inChannels == 4 * c);
    CHECK(chain.stages[1].filter == 3);
    CHECK(chain.stages[2].filter == 1);
    CHECK(chain.stages[2].outChannels == 4 * c);
    CHECK(chain.stages[1].producer == 0);
    CHECK(chain.stages[2].producer == 1);
  }
}

TEST_CASE("The stride-2 block has two readers of its first stage and halves the image") {
  const std::vector<ConvChainSpec> layers = convModelLayers("stride2");
  REQUIRE(layers.size() == 3);  // transitions into 28, 14 and 7
  for (const ConvChainSpec& chain : layers) {
    REQUIRE(chain.stages.size() == 4);
    CHECK(chain.stages[0].height == 2 * chain.width);
    CHECK(chain.stages[1].stride == 2);
    CHECK(chain.stages[1].filter == 3);
    CHECK(chain.stages[2].stride == 2);
    CHECK(chain.stages[2].filter == 1);
    CHECK(chain.stages[1].outHeight() == chain.width);
    CHECK(chain.stages[2].outHeight() == chain.width);
    CHECK(chain.stages[1].producer == 0);
    CHECK(chain.stages[2].producer == 0);
    CHECK(chain.stages[3].producer == 1);
    CHECK(chain.isRead(0));
    CHECK(chain.isRead(1));
    CHECK_FALSE(chain.isRead(2));
    CHECK_FALSE(chain.isRead(3));
  }
}

TEST_CASE("Every model's chains are well formed; a broken chain is named") {
  for (const std::string& model : convModelNames()) {
    const std::vector<ConvChainSpec> layers = convModelLayers(model);
    REQUIRE_FALSE(layers.empty());
    for (const ConvChainSpec& chain : layers) {
      INFO(model << " " << chain.label());
      CHECK(whyMalformed(chain).empty());
    }
  }
  CHECK(convModelLayers("alexnet").empty());

  ConvChainSpec chain = convModelLayers("resnet").front();
  chain.stages[1].inChannels = 32;
  CHECK(whyMalformed(chain) == "resnet 56x56x64 stage 1: does not read an image of its producer's shape");
  chain = convModelLayers("resnet").front();
  chain.stages[0].producer = 1;
  CHECK(whyMalformed(chain) == "resnet 56x56x64 stage 0: reads a later stage");
  chain = convModelLayers("stride2").front();
  chain.stages[1].height = 55;  // not twice the output
  CHECK(whyMalformed(chain).find("input is not stride times the output") != std::string::npos);
  chain = convModelLayers("bottleneck").front();
  chain.stages[1].filter = 5;
  CHECK(whyMalformed(chain) == "bottleneck 56x56x64 stage 1: filter is not 1 or 3");
}

#if defined(CUSYNC_HAVE_CONV_POLICIES)
namespace {

// Policy A and B assign every tile of `grid` the same semaphore and value, and count the same semaphores.
template <class A, class B>
bool samePolicy(cusync::GridShape grid) {
  if (A::semaphoreCount(grid) != B::semaphoreCount(grid)) return false;
  for (std::uint32_t i = 0; i < grid.tileCount(); ++i) {
    const cusync::TileCoord t = cusync::tileAtLinear(i, grid);
    if (A::sem(t, grid) != B::sem(t, grid) || A::value(t, grid) != B::value(t, grid)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("The bottleneck's and stride-2's proven policies are the functions the example's kernels use") {
  namespace g3x3 = cusync::generated::conv2d_3x3;
  namespace gb = cusync::generated::conv2d_bottleneck;
  namespace gs = cusync::generated::conv2d_stride2;
  // Producer grids of every stage some stage reads, for tiles of 64 and 128 pixels and 64 and 128 channels, at the
  // example's batches.
  for (const std::string& model : convModelNames())
    for (const ConvChainSpec& chain : convModelLayers(model))
      for (std::size_t s = 0; s < chain.stages.size(); ++s) {
        if (!chain.isRead(int(s))) continue;
        const ConvStageSpec& stage = chain.stages[s];
        for (int batch : {1, 3, 8, 32})
          for (std::uint32_t tileM : {64u, 128u})
            for (std::uint32_t tileN : {64u, 128u}) {
              const long long pixels = 1LL * batch * stage.outHeight() * stage.outWidth();
              const cusync::GridShape grid{std::uint32_t((stage.outChannels + tileN - 1) / tileN),
                                           std::uint32_t((pixels + tileM - 1) / tileM), 1u};
              INFO(model << " " << chain.label() << " stage " << s << " B=" << batch << " grid " << grid.x << "x"
                         << grid.y);
              CHECK(samePolicy<gb::Dep_dep3x3_g1_TileSync, g3x3::Dep_dep_g1_TileSync>(grid));
              CHECK(samePolicy<gb::Dep_dep3x3_g1_RowSync, g3x3::Dep_dep_g1_RowSync>(grid));
              CHECK(samePolicy<gb::Dep_dep1x1_g2_TileSync, g3x3::Dep_dep_g1_TileSync>(grid));
              CHECK(samePolicy<gb::Dep_dep1x1_g2_RowSync, g3x3::Dep_dep_g1_RowSync>(grid));
              CHECK(samePolicy<gs::Dep_dep3x3_g1_TileSync, g3x3::Dep_dep_g1_TileSync>(grid));
              CHECK(samePolicy<gs::Dep_dep3x3_g1_RowSync, g3x3::Dep_dep_g1_RowSync>(grid));
              CHECK(samePolicy<gs::Dep_dep1x1_g1_TileSync, g3x3::Dep_dep_g1_TileSync>(grid));
              CHECK(samePolicy<gs::Dep_dep1x1_g1_RowSync, g3x3::Dep_dep_g1_RowSync>(grid));
              // g1 of the stride-2 spec has two readers; the policy it posts under serves both.
              CHECK(samePolicy<gs::Producer_g1_TileSync, g3x3::Dep_dep_g1_TileSync>(grid));
              CHECK(samePolicy<gs::Producer_g1_RowSync, g3x3::Dep_dep_g1_RowSync>(grid));
            }
      }
}
#endif
