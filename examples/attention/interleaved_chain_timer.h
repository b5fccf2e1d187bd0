// attention_example --interleave: the chains of one problem, each checked on its own first, timed together in
// interleaved rounds (common/interleaved_graph_timer.cuh: one warm-up over all of them, then rounds that replay every
// chain's graph once in an order rotated per round), then checked again from a replay of their own graph. Host
// header.
//
// Why: timed one after the other, each chain meets the clocks and temperature the previous ones left
// (docs/BENCHMARKS.md, issue 12, session 20); mlp_fused_example --interleave does the same for the MLPs.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "common/interleaved_graph_timer.cuh"
#include "cusync/error.h"

namespace cusync::examples::attention {

// One chain's share of an interleaved timing.
struct InterleavedChainTiming {
  std::size_t row;           // the caller's index for the chain (InterleavedChainTimer::add)
  double microseconds;       // median over the timed rounds, per chain
  Comparison outputAfter;    // the output after a replay of the chain's own graph, poisoned before it
};

template <class Chain>
class InterleavedChainTimer {
 public:
  // Each chain's graph holds `repetitions` chains back to back.
  InterleavedChainTimer(cudaStream_t stream, int repetitions) : stream_(stream), timer_(stream, repetitions) {}

  // Captures `chain`'s graph now and keeps the chain as long as the timer: the graph launches kernels with
  // pointers into the chain's state (stages, split-K partials, side streams and events), and it is replayed only
  // when timeAndCheck is called, after other chains were made and checked. `row` is returned with its timings.
  void add(std::shared_ptr<const Chain> chain, std::size_t row) {
    timer_.add([&chain = *chain](cudaStream_t stream) { chain.enqueue(stream); });
    chains_.push_back(std::move(chain));
    rows_.push_back(row);
  }
  std::size_t size() const { return chains_.size(); }

  // Every chain added so far: 3 warm-up rounds, continued for `warmupMilliseconds`, then `samples` timed rounds;
  // then each chain's `output` poisoned, its graph replayed once and `output` compared with `reference`.
  std::vector<InterleavedChainTiming> timeAndCheck(DeviceBuffer<__half>& output, const DeviceBuffer<__half>& reference,
                                                   int warmupMilliseconds, int samples) {
    const std::vector<GraphTiming> timings = timer_.run(3, warmupMilliseconds, samples);
    std::vector<InterleavedChainTiming> measured;
    for (std::size_t v = 0; v < chains_.size(); ++v) {
      poison(output, stream_);
      CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream_));
      timer_.replay(v);
      measured.push_back({rows_[v], timings[v].medianMicroseconds, compareToReference(output, reference)});
    }
    return measured;
  }

 private:
  cudaStream_t stream_;
  std::vector<std::shared_ptr<const Chain>> chains_;  // declared before timer_: its graphs go before the chains
  std::vector<std::size_t> rows_;
  InterleavedGraphTimer timer_;
};

}  // namespace cusync::examples::attention
