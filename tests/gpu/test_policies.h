// The synchronization policies the GPU tests drive, one per dependency shape of the test stages:
//   TilePolicy for SameTile (consumer tile t reads producer tile t),
//   RowPolicy  for WholeRow (consumer tile (x, y) reads producer row y).
// By default these are the runtime's hand-written TileSync and RowSync. A test binary compiled with
// CUSYNC_GPU_TEST_POLICY_HEADER="header.h" takes them from that header instead (generated_policies.h: cusyncgen's
// output for a bundled spec). Host and device.
#pragma once

#if defined(CUSYNC_GPU_TEST_POLICY_HEADER)
#include CUSYNC_GPU_TEST_POLICY_HEADER
#else
#include "cusync/tile.h"

namespace cusync::gpu_test {
using TilePolicy = TileSync;
using RowPolicy = RowSync;
}  // namespace cusync::gpu_test
#endif
