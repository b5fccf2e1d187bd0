// The shared-memory carveout every stage kernel of the token-generation chain prefers (uniform_carveout.h), unless
// attention_example's --carveout says otherwise. Host code.
//
// Why 28%: 64 KB of shared memory holds what the decode kernels need at their occupancy (the attention stage's 4.7 KB
// blocks, the GEMV stages' warp sums and staged tokens) and leaves the rest of the SM's memory as L1, through which
// the GEMV stages' weight loads are in flight. Measured on the H200 (docs/BENCHMARKS.md, issue 14, session 33):
// - left to the driver, the kernels' splits differ, so at GPT-3 1 x 1024 the attention stage's 204 blocks waited
//   until SMs had drained of the QKV GEMV's blocks, then ran 8-9 to an SM on 23 SMs at half speed;
// - at 28% and 44% they start beside the QKV blocks: the synchronized chains 1-3 us faster (1.057-1.094x StreamSync,
//   from 1.00-1.05), StreamSync itself unchanged;
// - at 100% (28 KB of L1) every GEMV streamed 5-10% slower.
// Prompt processing keeps the driver's choice: its CUTLASS GEMMs need far more shared memory, and it was not measured.
#pragma once

namespace cusync::examples::attention {

inline constexpr int kDecodeSharedCarveoutPercent = 28;

}  // namespace cusync::examples::attention
