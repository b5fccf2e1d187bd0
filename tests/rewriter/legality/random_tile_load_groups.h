// Random small groups of `#pragma tile` statements over a fixed set of memory: global tiles A, B, D, a tile order
// `order` and an output `out` (kernel pointer arguments), __shared__ arrays As, Bs, Ds and local scalars x, y, z.
// Statements wait (on `k`, on `order[k]`, or on a local) and then load, copy, accumulate or store; the mix makes
// every kind of conflict likely: reads of guarded memory, RAW/WAR/WAW on each kind of memory, wait arguments read
// from memory.
#pragma once

#include <random>

#include "tile_load_group_model.h"

namespace cusync::rewriter_test {

// 2 to 6 statements, about a third of them waiting.
ModelGroup randomGroup(std::mt19937& random);

}  // namespace cusync::rewriter_test
