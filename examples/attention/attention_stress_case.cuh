// What the attention stress tests (attention_decode_stress.cu, attention_prompt_stress.cu) do with each case: replay
// a CUDA graph of `perGraph` chain executions `replays` times without resetting counters or semaphores, each
// execution preceded by poisoning QKV, T, Y, the caches' new positions and the chain's scratch with NaN and followed
// by an element-wise comparison of T, Y and the caches' new positions with the fp32 reference. Host code with the
// comparison kernels; include from one .cu file per program.
#pragma once

#include "attention_chain.h"
#include "common/device_buffers.cuh"
#include "common/mismatch_count.cuh"

namespace cusync::examples::attention {

// Returns the mismatched elements over every execution (0: all correct); `mismatches` is the counter's buffer.
template <class Chain>
unsigned long long countStressMismatches(Chain& chain, AttentionBuffers& b, const AttentionProblem& p,
                                         cudaStream_t stream, int perGraph, long long replays,
                                         DeviceBuffer<unsigned long long>& mismatches) {
  return countMismatchesOverReplays(mismatches, stream, perGraph, replays, [&](cudaStream_t s) {
    poison(b.qkv, s);
    poison(b.t, s);
    poison(b.y, s);
    poisonAppended(b, p, s);
    chain.poisonScratch(s);
    chain.enqueue(s);
    countMismatches<><<<132, 256, 0, s>>>(b.t.get(), b.tReference.get(), b.t.size(), mismatches.get());
    countMismatches<><<<264, 256, 0, s>>>(b.y.get(), b.yReference.get(), b.y.size(), mismatches.get());
    gatherAppended(b, p, s);
    countMismatches<><<<132, 256, 0, s>>>(b.appended.get(), b.appendedReference.get(), b.appended.size(),
                                          mismatches.get());
  });
}

}  // namespace cusync::examples::attention
