// The synchronization policies the GPU tests drive, one per dependency shape of the test stages:
//   TilePolicy for SameTile (consumer tile t reads producer tile t),
//   RowPolicy  for WholeRow (consumer tile (x, y) reads producer row y).
// By default these are the runtime's hand-written TileSync and RowSync. A build can test other implementations
// of the same policy concept (cusyncgen's generated headers) by pointing the CMake cache variable
// CUSYNC_GPU_TEST_POLICY_HEADER at a header that defines cusync::gpu_test::TilePolicy and RowPolicy.
// Host and device.
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
