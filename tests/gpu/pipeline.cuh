// A test pipeline: stages in dependency order, each with the launch of its kernel, enqueued one iteration at a time
// under one of the runtime's stage orderings. Enqueueing is capture-safe (side streams fork from and join back to
// the caller's stream through events), so the same code runs eagerly and inside CUDA graph capture. Host code.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cusync/cusync.cuh"
#include "device_memory.h"

namespace cusync::gpu_test {

inline const char* orderingName(StageOrdering ordering) {
  switch (ordering) {
    case StageOrdering::StreamOrder: return "StreamOrder";
    case StageOrdering::WaitKernel: return "WaitKernel";
    case StageOrdering::ProgrammaticLaunch: return "ProgrammaticLaunch";
    case StageOrdering::NoOrdering: return "NoOrdering";
  }
  return "?";
}

// How a stage's kernel is launched: on `stream`, after the previous kernel or programmatically, and with
// synchronized input views (wait on producers' semaphores) or unsynchronized ones (stream order makes waiting
// unnecessary).
using StageLauncher = std::function<void(cudaStream_t stream, LaunchOrdering ordering, bool synchronizedInputs)>;

class Pipeline {
 public:
  explicit Pipeline(StageOrdering ordering) : ordering_(ordering) {}

  // Stages must be added producers first.
  void add(const Stage& stage, std::vector<const Stage*> producers, StageLauncher launch) {
    nodes_.push_back(Node{&stage, std::move(producers), std::move(launch), std::make_unique<Stream>(),
                          std::make_unique<Event>()});
  }

  StageOrdering ordering() const { return ordering_; }

  // One iteration of every stage. Everything it enqueues is done when `stream`'s later work runs, so the next
  // iteration never overwrites data the previous one still reads.
  void enqueueIteration(cudaStream_t stream) {
    switch (ordering_) {
      case StageOrdering::StreamOrder:
        for (Node& node : nodes_) node.launch(stream, LaunchOrdering::StreamOrder, false);
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
  struct Node {
    const Stage* stage;
    std::vector<const Stage*> producers;
    StageLauncher launch;
    std::unique_ptr<Stream> sideStream;
    std::unique_ptr<Event> done;
  };

  // The first stage runs on `stream`, every later stage on its own stream (forked from `stream`), preceded by one
  // wait-kernel per producer when `waitKernels`. Stages are enqueued producers first, so a wait-kernel is always
  // enqueued after the producer kernel it waits for (this also keeps tools that serialize launches, such as
  // compute-sanitizer, from deadlocking).
  void enqueueOnSideStreams(cudaStream_t stream, bool waitKernels) {
    CUSYNC_CUDA_CHECK(cudaEventRecord(fork_, stream));
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      Node& node = nodes_[i];
      cudaStream_t stageStream = stream;
      if (i > 0) {
        stageStream = *node.sideStream;
        CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(stageStream, fork_, 0));
      }
      if (waitKernels)
        for (const Stage* producer : node.producers) launchWaitKernel(*producer, *node.stage, stageStream);
      node.launch(stageStream, LaunchOrdering::StreamOrder, true);
    }
    for (std::size_t i = 1; i < nodes_.size(); ++i) {
      CUSYNC_CUDA_CHECK(cudaEventRecord(*nodes_[i].done, *nodes_[i].sideStream));
      CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(stream, *nodes_[i].done, 0));
    }
  }

  StageOrdering ordering_;
  std::vector<Node> nodes_;
  Event fork_;
};

}  // namespace cusync::gpu_test
