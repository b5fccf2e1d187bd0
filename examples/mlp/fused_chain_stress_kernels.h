// The kernels of mlp_fused_stress (fused_chain_stress.cu). Each is compiled in a translation unit of its own, which
// examples/mlp/CMakeLists.txt generates from its list, so that a build compiles them in parallel: in one unit the
// kernels took minutes of one core each, in series, which the lent GPU machine's 16 cores could not shorten.
// Every translation unit of the program includes this header first: the per-unit delay and the watchdog are
// compile-time settings of the fused kernel (fused_chain_gemm_kernel.hpp's CUSYNC_CHAIN_DELAY hook, the waits'
// CUSYNC_WAIT_TIMEOUT_NS), and all units must agree on them. Host header.
#pragma once

// A pseudo-random delay of up to this many ns in every unit, in the load warp before its first wait and in the math
// warps before each post; a wait that lasts longer than the timeout traps (a hang fails the test).
#define CUSYNC_CHAIN_DELAY_NS 20000
#define CUSYNC_WAIT_TIMEOUT_NS 5000000000ull

#include "fused_chain_registry.h"

namespace cusync::examples::stress {

// GELU and SwiGLU on one math warp group, 64x128 tiles.
FusedChainEntry geluKernel();
SwiGluChainEntry swiGluKernel();
// GELU on 2x1 clusters: the unit hand-off between the two blocks, multicast B, rank 1's tile past M at M = 1 and 64.
FusedChainEntry clusterKernel();
// A tile width per GEMM on 2x1 clusters: the pipeline drained where a block turns from GEMM 1 to GEMM 2, whose stage
// buffers overlap GEMM 1's differently, and the wider GEMM's extra bytes per stage: GEMM 2 wider (128 then 256
// columns), and GEMM 1 wider (128 then 96, whose epilogues also have C-load pipelines of different types).
SwiGluChainEntry twoTileWiderSecondKernel();
SwiGluChainEntry twoTileNarrowerSecondKernel();
// Two widths on one math warp group, single blocks: GEMM 1 in 96-column paired tiles (groups of 48 outputs), GEMM 2
// in 128, as the SwiGLU defaults run LLaMA at M = 128 since session 10. Its intermediate sizes are multiples of 48,
// and GEMM 2's K then ends in a partial k-block.
SwiGluChainEntry narrowFirstWsKernel();
// Staged epilogues (staged_tile_epilogue.hpp: the producer warp group's spare warps store and post each tile while
// the math warps run the next unit), on 2x1 clusters: GELU, and SwiGLU with GEMM 2 wider than GEMM 1.
FusedChainEntry stagedGeluKernel();
SwiGluChainEntry stagedSwiGluKernel();
// A pipeline per GEMM (session 20): GELU in 128x96 tiles at 7 stages, then 128x192 at 5, on 2x1 clusters, each GEMM
// on its own barriers over the stage buffers they share (the GPT-3 default at M = 256); intermediate sizes that are
// multiples of 96.
FusedChainEntry twoPipelineKernel();
// The same in 64-row tiles on one math warp group: 64x96 at 10 stages, then 64x192 at 6 (the GPT-3 default at
// M = 128 since session 21; rank 1's tile past M at M = 1 and 64).
FusedChainEntry narrowTwoPipelineKernel();

}  // namespace cusync::examples::stress
