// The chain executor's "avoid wait-kernel" decision (runtime/include/cusync/wait_kernel_decision.h), without a GPU:
// the wait-kernel is left out only when the spec's Optimizations_<dependency> allows it at the stages' grids and
// every block of the stage and of every stage it waits on, directly or not, fits in the device's real slots.
// The Optimizations types are the MLP examples' own, as cusyncgen emits them by default (132 SMs, occupancy 1):
// the golden headers, which the policy suite keeps equal to cusyncgen's output.
#include <algorithm>

#include <catch2/catch.hpp>

#include "cusync/wait_kernel_decision.h"
#include "gpt3_mlp.h"
#include "llama_mlp.h"

using namespace cusync;
using Catch::Matchers::Contains;

namespace {
using Gpt3Dependency = generated::gpt3_mlp::Optimizations_dep;  // g2 waits on g1
using LlamaDown = generated::llama_mlp::Optimizations_down;      // g2 waits on gs, gs on g1

// One block per tile (no split-K, not persistent).
StageFootprint oneBlockPerTile(GridShape grid) { return {grid, grid.tileCount()}; }

constexpr DeviceSlots kH100{132, 1};
}  // namespace

TEST_CASE("the generated MLP analyses assume the H100's 132 SMs at occupancy 1", "[wait_kernel_decision]") {
  STATIC_REQUIRE(Gpt3Dependency::slots == 132);
  STATIC_REQUIRE(LlamaDown::slots == 132);
}

TEST_CASE("the wait-kernel is left out when the spec allows it and all blocks fit in the device's slots",
          "[wait_kernel_decision]") {
  // GPT-3 at M = 128 on 128x256 tiles: g1 24 tiles, g2 48 tiles, 72 <= 132.
  const auto decision = decideWaitKernel<Gpt3Dependency>(kH100, oneBlockPerTile({48, 1, 1}),
                                                         oneBlockPerTile({24, 1, 1}));
  CHECK(decision.avoidWaitKernel);
  CHECK_THAT(decision.why, Contains("left out") && Contains("72 blocks"));
}

TEST_CASE("exactly one wave of blocks still avoids the wait-kernel", "[wait_kernel_decision]") {
  CHECK(decideWaitKernel<Gpt3Dependency>(kH100, oneBlockPerTile({88, 1, 1}), oneBlockPerTile({44, 1, 1}))
            .avoidWaitKernel);
  CHECK_FALSE(decideWaitKernel<Gpt3Dependency>(kH100, oneBlockPerTile({89, 1, 1}), oneBlockPerTile({44, 1, 1}))
                  .avoidWaitKernel);
}

TEST_CASE("the wait-kernel is kept where the spec forbids it, even on a device with more slots than it assumed",
          "[wait_kernel_decision]") {
  // GPT-3 at M = 1 on 64x128 tiles: g1 48 tiles, g2 96 tiles, 144 > 132. Kernels at 2 blocks per SM would hold all
  // 144 blocks, but the spec was proven for occupancy 1 only: its refusal stands.
  const auto decision = decideWaitKernel<Gpt3Dependency>(DeviceSlots{132, 2}, oneBlockPerTile({96, 1, 1}),
                                                         oneBlockPerTile({48, 1, 1}));
  CHECK_FALSE(decision.avoidWaitKernel);
  CHECK_THAT(decision.why, Contains("spec's analysis does not allow") && Contains("144 tiles") &&
                               Contains("132 slots (132 SMs x occupancy 1)") &&
                               Contains("the device has 264 slots"));
}

TEST_CASE("the wait-kernel is kept where the device has fewer slots than the spec assumed",
          "[wait_kernel_decision]") {
  // 120 tiles fit the spec's 132 slots, not those of a 114-SM H100 PCIe at occupancy 1.
  const auto fewerSms = decideWaitKernel<Gpt3Dependency>(DeviceSlots{114, 1}, oneBlockPerTile({72, 1, 1}),
                                                         oneBlockPerTile({48, 1, 1}));
  CHECK_FALSE(fewerSms.avoidWaitKernel);
  CHECK_THAT(fewerSms.why, Contains("spec allows") && Contains("120 blocks") &&
                               Contains("114 slots (114 SMs x measured occupancy 1)") &&
                               Contains("fewer than the spec assumed, 132 slots"));
  // A kernel that cannot be resident at all (occupancy 0, e.g. too much shared memory) never avoids it.
  CHECK_FALSE(decideWaitKernel<Gpt3Dependency>(DeviceSlots{132, 0}, oneBlockPerTile({2, 1, 1}),
                                               oneBlockPerTile({1, 1, 1}))
                  .avoidWaitKernel);
}

TEST_CASE("blocks, not tiles, must fit: split-K parts count", "[wait_kernel_decision]") {
  // 72 tiles satisfy the spec; GEMM 1 split in 3 along K starts 72 blocks, 48 + 72 = 120 <= 132 fits, in 4 96 do not.
  CHECK(decideWaitKernel<Gpt3Dependency>(kH100, oneBlockPerTile({48, 1, 1}), StageFootprint{{24, 1, 1}, 72})
            .avoidWaitKernel);
  const auto split = decideWaitKernel<Gpt3Dependency>(kH100, oneBlockPerTile({48, 1, 1}),
                                                      StageFootprint{{24, 1, 1}, 96});
  CHECK_FALSE(split.avoidWaitKernel);
  CHECK_THAT(split.why, Contains("144 blocks") && Contains("more blocks than their grids have tiles (72)"));
}

TEST_CASE("every stage the stage waits on counts, not only its direct producer", "[wait_kernel_decision]") {
  // LLaMA's GEMM 2 waits on the SwiGLU stage, which waits on GEMM 1: canAvoidWaitKernel(g2, g1, gs).
  const StageFootprint gemm1 = oneBlockPerTile({40, 1, 1}), swiGlu = oneBlockPerTile({40, 1, 1});
  // g2 + gs = 100 would fit; with g1 140 does not.
  CHECK_FALSE(decideWaitKernel<LlamaDown>(kH100, oneBlockPerTile({60, 1, 1}), gemm1, swiGlu).avoidWaitKernel);
  CHECK(decideWaitKernel<LlamaDown>(kH100, oneBlockPerTile({52, 1, 1}), gemm1, swiGlu).avoidWaitKernel);
}

TEST_CASE("at occupancy 1 on 132 SMs the decision is the examples' former hand-written sum of blocks",
          "[wait_kernel_decision]") {
  // The MLP examples used to leave the wait-kernel out when the blocks of both launches fit in SMs x occupancy.
  // Blocks are tiles x split-K parts, or a persistent launch's min(slots, work units); either way a launch that
  // fits in 132 slots has no more tiles than blocks, so the spec's tile count then fits its 132 slots too.
  for (std::uint32_t tiles1 = 1; tiles1 <= 160; tiles1 += 3)
    for (std::uint32_t tiles2 = 1; tiles2 <= 160; tiles2 += 5)
      for (std::uint32_t parts1 : {1u, 2u, 5u})
        for (bool persistent : {false, true}) {
          const std::uint32_t units1 = tiles1 * parts1;
          const std::uint32_t blocks1 = persistent ? std::min(132u, units1) : units1;
          const std::uint32_t blocks2 = persistent ? std::min(132u, tiles2) : tiles2;
          const bool handWritten = blocks1 + blocks2 <= 132;
          CHECK(decideWaitKernel<Gpt3Dependency>(kH100, StageFootprint{{tiles2, 1, 1}, blocks2},
                                                 StageFootprint{{tiles1, 1, 1}, blocks1})
                    .avoidWaitKernel == handWritten);
        }
}
