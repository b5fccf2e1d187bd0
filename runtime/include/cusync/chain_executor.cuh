// A chain of separately launched stages: the stages in dependency order, each with the launch of its kernel, enqueued
// one iteration at a time under one of the runtime's stage orderings (StageOrdering; docs/DESIGN.md, "Progress").
// Enqueueing is capture-safe: side streams fork from and join back to the caller's stream through events, so the
// same code runs eagerly and inside CUDA graph capture, and everything an iteration enqueues is done before the
// caller's stream goes on (the next iteration may overwrite what this one reads). A fused chain (one persistent
// launch) needs none of this: fused_chain.cuh. Host code.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "cusync/error.h"
#include "cusync/launch.cuh"
#include "cusync/stage.cuh"
#include "cusync/wait_kernel.cuh"
#include "cusync/wait_kernel_targets.h"
#include "cusync/wait_kernel_decision.h"

namespace cusync {

inline const char* stageOrderingName(StageOrdering ordering) {
  switch (ordering) {
    case StageOrdering::StreamOrder: return "StreamOrder";
    case StageOrdering::WaitKernel: return "WaitKernel";
    case StageOrdering::ProgrammaticLaunch: return "ProgrammaticLaunch";
    case StageOrdering::NoOrdering: return "NoOrdering";
  }
  return "?";
}

// How the executor launches a stage's kernel: on `stream`, after the previous kernel (StreamOrder) or
// programmatically, and whether the stage must wait for its producers tile by tile (`synchronizedInputs`) or the
// stream already orders it after them (StreamOrder: its kernel may take unsynchronized input views).
using StageLaunch = std::function<void(cudaStream_t stream, LaunchOrdering ordering, bool synchronizedInputs)>;

// What a launch of `stage` occupies, as decideWaitKernel counts it: blocks, not tiles, since a waiting block holds
// a slot whatever part of a tile it computes.
inline StageFootprint footprintOf(const Stage& stage) { return {stage.grid(), stage.blocksPerLaunch()}; }

// decideWaitKernel (wait_kernel_decision.h) on the stages themselves: `stagesItWaitsOn` in the order of the
// parameters of `Optimizations::canAvoidWaitKernel` after the consumer's grid.
template <class Optimizations, class... Stages>
WaitKernelDecision decideWaitKernel(DeviceSlots device, const Stage& stage, const Stages&... stagesItWaitsOn) {
  return decideWaitKernel<Optimizations>(device, footprintOf(stage), footprintOf(stagesItWaitsOn)...);
}

class ChainExecutor {
 public:
  // `sideStreamFlags`: how the side streams of WaitKernel and NoOrdering are created (cudaStreamNonBlocking, or
  // cudaStreamDefault for streams that also synchronize with the legacy default stream, as the caller's may).
  explicit ChainExecutor(StageOrdering ordering, unsigned sideStreamFlags = cudaStreamNonBlocking)
      : ordering_(ordering), sideStreamFlags_(sideStreamFlags) {
    if (usesSideStreams()) fork_ = makeEvent();
  }

  // Stages must be added producers first. `waitKernels` false leaves this stage's wait-kernels out under
  // WaitKernel: legal only when the stage and every stage it waits on, directly or not, fit in the GPU's slots
  // together (the paper's "avoid wait-kernel"; NoOrdering does this for every stage). The overload below takes the
  // decision from the spec's Optimizations_<dependency> and the device instead of the caller's word.
  void add(const Stage& stage, std::vector<const Stage*> producers, StageLaunch launch, bool waitKernels = true) {
    Node node{&stage, std::move(producers), std::move(launch), waitKernels, nullptr, nullptr};
    if (usesSideStreams() && !nodes_.empty()) {
      node.sideStream = makeStream(sideStreamFlags_);
      node.done = makeEvent();
    }
    nodes_.push_back(std::move(node));
  }
  // As above, with the wait-kernels left out exactly where `decision` (decideWaitKernel, from the spec's
  // Optimizations_<dependency> and the device's slots) found that sound.
  void add(const Stage& stage, std::vector<const Stage*> producers, StageLaunch launch,
           const WaitKernelDecision& decision) {
    add(stage, std::move(producers), std::move(launch), /*waitKernels=*/!decision.avoidWaitKernel);
  }

  StageOrdering ordering() const { return ordering_; }

  // One iteration of every stage on `stream`.
  void enqueueIteration(cudaStream_t stream) const {
    switch (ordering_) {
      case StageOrdering::StreamOrder:
        for (const Node& node : nodes_) node.launch(stream, LaunchOrdering::StreamOrder, false);
        return;
      case StageOrdering::ProgrammaticLaunch:
        // Each stage's blocks trigger at their start, so a stage launched programmatically after its predecessor
        // runs only once all of the predecessor's blocks are resident: its waits are for running or done blocks.
        for (std::size_t i = 0; i < nodes_.size(); ++i)
          nodes_[i].launch(stream, i > 0 ? LaunchOrdering::Programmatic : LaunchOrdering::StreamOrder, true);
        return;
      case StageOrdering::WaitKernel:
      case StageOrdering::NoOrdering:
        enqueueOnSideStreams(stream, ordering_ == StageOrdering::WaitKernel);
        return;
    }
  }

 private:
  struct StreamDeleter {
    void operator()(CUstream_st* stream) const { cudaStreamDestroy(stream); }
  };
  struct EventDeleter {
    void operator()(CUevent_st* event) const { cudaEventDestroy(event); }
  };
  using OwnedStream = std::unique_ptr<CUstream_st, StreamDeleter>;
  using OwnedEvent = std::unique_ptr<CUevent_st, EventDeleter>;

  static OwnedStream makeStream(unsigned flags) {
    cudaStream_t stream = nullptr;
    CUSYNC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, flags));
    return OwnedStream(stream);
  }
  static OwnedEvent makeEvent() {
    cudaEvent_t event = nullptr;
    CUSYNC_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    return OwnedEvent(event);
  }

  struct Node {
    const Stage* stage;
    std::vector<const Stage*> producers;
    StageLaunch launch;
    bool waitKernels;
    OwnedStream sideStream;  // every stage but the first, under WaitKernel and NoOrdering
    OwnedEvent done;
  };

  bool usesSideStreams() const {
    return ordering_ == StageOrdering::WaitKernel || ordering_ == StageOrdering::NoOrdering;
  }

  // The first stage runs on `stream`, every later stage on its own stream (forked from `stream`), preceded by one
  // wait-kernel per producer when `waitKernels` (and the stage's own flag). Stages are enqueued producers first, so
  // a wait-kernel is always enqueued after the producer kernel it waits for (this also keeps tools that serialize
  // launches, such as compute-sanitizer, from deadlocking). Every side stream joins `stream` at the end.
  void enqueueOnSideStreams(cudaStream_t stream, bool waitKernels) const {
    CUSYNC_CUDA_CHECK(cudaEventRecord(fork_.get(), stream));
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const Node& node = nodes_[i];
      cudaStream_t stageStream = stream;
      if (i > 0) {
        stageStream = node.sideStream.get();
        CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(stageStream, fork_.get(), 0));
      }
      if (waitKernels && node.waitKernels)
        for (std::size_t target : waitKernelTargetsOf(i)) launchWaitKernel(*nodes_[target].stage, *node.stage, stageStream);
      node.launch(stageStream, LaunchOrdering::StreamOrder, true);
    }
    for (std::size_t i = 1; i < nodes_.size(); ++i) {
      CUSYNC_CUDA_CHECK(cudaEventRecord(nodes_[i].done.get(), nodes_[i].sideStream.get()));
      CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(stream, nodes_[i].done.get(), 0));
    }
  }

  // The stages node i's wait-kernels wait for: its producers and, through producers without wait-kernels, theirs
  // (wait_kernel_targets.h says why).
  std::vector<std::size_t> waitKernelTargetsOf(std::size_t i) const {
    auto indexOf = [this](const Stage* stage) {
      for (std::size_t j = 0; j < nodes_.size(); ++j)
        if (nodes_[j].stage == stage) return j;
      throw Error("cusync: chain executor: stage '" + stage->name() + "' is a producer but was never added");
    };
    return waitKernelTargets(
        i,
        [&](std::size_t s) {
          std::vector<std::size_t> producers;
          for (const Stage* p : nodes_[s].producers) producers.push_back(indexOf(p));
          return producers;
        },
        [&](std::size_t s) { return s != 0 && nodes_[s].waitKernels; });
  }

  StageOrdering ordering_;
  unsigned sideStreamFlags_;
  std::vector<Node> nodes_;
  OwnedEvent fork_;  // under WaitKernel and NoOrdering
};

}  // namespace cusync
