// Deliberately wrong policies, built from correct ones by changing only `value` (the number of posts a consumer
// waits for). Too low lets a consumer read tiles that are not finished; too high waits for posts that never come.
// The GPU tests show that the element check catches the first and the watchdog the second. Host and device.
#pragma once

#include <cstdint>

#include "cusync/tile.h"

namespace cusync::gpu_test {

template <class Policy>
struct ValueTooLow : Policy {
  CUSYNC_HOST_DEVICE static std::uint32_t value(TileCoord p, GridShape g) { return Policy::value(p, g) - 1; }
};

template <class Policy>
struct ValueTooHigh : Policy {
  CUSYNC_HOST_DEVICE static std::uint32_t value(TileCoord p, GridShape g) { return Policy::value(p, g) + 1; }
};

}  // namespace cusync::gpu_test
