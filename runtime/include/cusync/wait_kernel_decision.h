// Whether a chain executor may leave a stage's wait-kernels out (the paper's "avoid wait-kernel", section IV-C),
// decided from the spec's Optimizations_<dependency> (emitted by cusyncgen) and the device the chain runs on.
// Host code, no CUDA: the executor's Stage-based form is in chain_executor.cuh.
//
// Why two conditions. Without the wait-kernel, a consumer block may be dispatched before a producer block it waits
// for; it then spins in a slot, and progress needs every block it waits on, directly or through another stage, to
// be resident too. That holds when all blocks of the stage and of every stage it waits on fit in the device's slots
// at once (docs/DESIGN.md, "Progress"). The spec's analysis states which stages count and that their tiles fit in
// `Optimizations::slots`, but those slots are `smCount x occupancy` as cusyncgen was told (--sms, --occupancy), an
// assumption about a GPU and kernels it never saw: the device may have fewer SMs, the kernels a lower occupancy,
// and a launch may start more blocks than its grid has tiles (split-K parts). So the wait-kernel is left out only
// when the spec allows it at the stages' grids AND the blocks the launches really start fit in the slots the
// device really has (its SMs times the measured occupancy of the kernels involved, the smallest of them).
// This is the per-stage condition the spec states. A later stage that keeps its wait-kernel while a producer left
// its own out would otherwise start once that producer's blocks have, and could take slots that earlier, still
// unstarted blocks need: the chain executor's wait-kernels therefore also wait, through such a producer, for its
// producers (wait_kernel_targets.h).
#pragma once

#include <cstdint>
#include <string>

#include "cusync/tile.h"

namespace cusync {

// What one launch of a stage occupies: its tile grid (what the spec's analysis counts) and the blocks the launch
// starts (tiles x split-K parts, or the persistent block count).
struct StageFootprint {
  GridShape grid;
  std::uint32_t blocksPerLaunch = 0;
};

// The slots of the device a chain runs on: blocks resident at once.
struct DeviceSlots {
  std::uint32_t smCount = 0;
  // Blocks per SM of the kernels involved, measured (cudaOccupancyMaxActiveBlocksPerMultiprocessor): the smallest
  // of them, as a block of any of them may take the slot another needs.
  std::uint32_t occupancy = 0;
  std::uint64_t slots() const { return std::uint64_t{smCount} * occupancy; }
};

struct WaitKernelDecision {
  bool avoidWaitKernel = false;
  std::string why;  // one sentence: which condition held or failed, with the numbers
};

// `Optimizations`: a cusyncgen Optimizations_<dependency> type. `stage` is the consumer of that dependency and
// `stagesItWaitsOn` every stage it waits on, directly or not, in the order of the parameters of
// `Optimizations::canAvoidWaitKernel` after its first (the consumer's grid): the generated header names them.
template <class Optimizations, class... Footprints>
WaitKernelDecision decideWaitKernel(DeviceSlots device, StageFootprint stage, Footprints... stagesItWaitsOn) {
  const bool specAllows = Optimizations::canAvoidWaitKernel(stage.grid, stagesItWaitsOn.grid...);
  const std::uint64_t tiles = (std::uint64_t{stage.grid.tileCount()} + ... + stagesItWaitsOn.grid.tileCount());
  const std::uint64_t blocks = (std::uint64_t{stage.blocksPerLaunch} + ... + stagesItWaitsOn.blocksPerLaunch);
  const std::string assumed = std::to_string(Optimizations::slots) + " slots (" +
                              std::to_string(Optimizations::smCount) + " SMs x occupancy " +
                              std::to_string(Optimizations::occupancy) + ")";
  const std::string real = std::to_string(device.slots()) + " slots (" + std::to_string(device.smCount) +
                           " SMs x measured occupancy " + std::to_string(device.occupancy) + ")";
  if (!specAllows) {
    // A device with more slots than the spec assumed does not overrule it: the analysis was stated for its slots.
    const std::string moreOnDevice =
        device.slots() > Optimizations::slots
            ? "; the device has " + real + ": cusyncgen --sms/--occupancy would state the analysis for it"
            : "";
    return {false, "wait-kernel kept: the spec's analysis does not allow leaving it out at these grids (" +
                       std::to_string(tiles) + " tiles of the stage and every stage it waits on, the spec assumes " +
                       assumed + ")" + moreOnDevice};
  }
  if (blocks > device.slots()) {
    std::string cause;  // why the spec's yes does not carry over to this device
    if (device.slots() < Optimizations::slots) cause = ", fewer than the spec assumed, " + assumed;
    else if (blocks > tiles)
      cause = ", as the launches start more blocks than their grids have tiles (" + std::to_string(tiles) + ")";
    return {false, "wait-kernel kept: the spec allows leaving it out, but the " + std::to_string(blocks) +
                       " blocks of the stage and every stage it waits on do not fit in the device's " + real + cause +
                       ": not all of them can be resident, so a waiting block could hold a slot a producer needs"};
  }
  return {true, "wait-kernel left out: the spec allows it at these grids and the " + std::to_string(blocks) +
                    " blocks of the stage and every stage it waits on fit in the device's " + real +
                    ", so all are resident at once"};
}

}  // namespace cusync
