// The GPU tests' policies as cusyncgen generates them from the bundled GPT-3 MLP spec (examples/mlp/gpt3_mlp.dep):
// its dependency `dep` — a g2 tile reads the whole row of g1 tiles — yields a TileSync and a RowSync policy, which
// are exactly the SameTile and WholeRow test dependencies' policies on 2-D grids. The binary
// cusync_gpu_generated_policy_tests compiles stage_ordering_test.cu with this header (CUSYNC_GPU_TEST_POLICY_HEADER)
// so that pairs, chains, iterations and graphs run on generated code, not only on the hand-written TileSync/RowSync.
// The include path holds the generated gpt3_mlp.h (tests/gpu/CMakeLists.txt runs cusyncgen, or takes a folder of
// generated headers). Host and device.
#pragma once

#include "gpt3_mlp.h"

namespace cusync::gpu_test {
using TilePolicy = cusync::generated::gpt3_mlp::Dep_dep_g1_TileSync;
using RowPolicy = cusync::generated::gpt3_mlp::Dep_dep_g1_RowSync;
}  // namespace cusync::gpu_test
