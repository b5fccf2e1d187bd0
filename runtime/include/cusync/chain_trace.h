// Where the time of a fused chain goes, unit by unit: an optional record per work unit of a launch, written by the
// kernel when the launch is given a trace buffer (one record per queue index; a later launch overwrites). Times
// are the GPU's global timer (ns). Serves host and device (includes nothing from CUDA).
//
// Why: a fused chain can lose to the same kernel launched once per stage even though it removes a partial wave, and
// neither the total time nor the waves say why. The records separate the unit's MMA (data arrival included: a
// consumer unit whose A is not posted stalls here) from its epilogue and post, and show the gaps a block spends
// without a unit.
#pragma once

#include <cstdint>

namespace cusync {

struct ChainUnitTrace {
  std::uint32_t stage, x, y, part;
  std::uint32_t block, sm;
  std::uint64_t drawn;      // load warp took the ticket
  std::uint64_t mathStart;  // math warps took the unit
  std::uint64_t mmaDone;    // last k-block multiplied (its operands, A's waits included, had arrived)
  std::uint64_t done;       // split-K reduction, epilogue, stores completed and tile posted (or not its last part)
  std::uint64_t mmaCycles;  // the SM's clock cycles from mathStart to mmaDone: over the timer's ns, its clock rate
  // The unit's block's first instruction: from the launch's earliest, the dispatch of its blocks; to the block's
  // first drawn and mathStart, its prologue (barrier set-up, cluster sync, the first draw and the first loads).
  std::uint64_t blockEntered;
};

}  // namespace cusync
