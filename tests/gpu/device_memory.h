// Owning handles for what the GPU tests allocate: device arrays, streams, events, executable graphs. Host code.
// Every CUDA call is checked (cusync::Error on failure), so a failed launch surfaces at the call that saw it.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "cusync/error.h"

namespace cusync::gpu_test {

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t size) : size_(size) {
    CUSYNC_CUDA_CHECK(cudaMalloc(&data_, size * sizeof(T)));
    CUSYNC_CUDA_CHECK(cudaMemset(data_, 0, size * sizeof(T)));
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(data_); }

  T* data() const { return data_; }
  std::size_t size() const { return size_; }

  std::vector<T> toHost() const {
    std::vector<T> host(size_);
    CUSYNC_CUDA_CHECK(cudaMemcpy(host.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  void fromHost(const std::vector<T>& host) {
    if (host.size() != size_) throw Error("DeviceArray::fromHost: size mismatch");
    CUSYNC_CUDA_CHECK(cudaMemcpy(data_, host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  void zero() { CUSYNC_CUDA_CHECK(cudaMemset(data_, 0, size_ * sizeof(T))); }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

class Stream {
 public:
  Stream() { CUSYNC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { cudaStreamDestroy(stream_); }
  operator cudaStream_t() const { return stream_; }
  void synchronize() const { CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event() { CUSYNC_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { cudaEventDestroy(event_); }
  operator cudaEvent_t() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// A graph captured from what `enqueue(stream)` puts on `stream`, instantiated for replay.
class CapturedGraph {
 public:
  template <class Enqueue>
  CapturedGraph(cudaStream_t stream, Enqueue&& enqueue) {
    CUSYNC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue(stream);
    } catch (...) {
      cudaGraph_t abandoned = nullptr;
      cudaStreamEndCapture(stream, &abandoned);
      if (abandoned) cudaGraphDestroy(abandoned);
      throw;
    }
    cudaGraph_t graph = nullptr;
    CUSYNC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    const cudaError_t instantiated = cudaGraphInstantiate(&exec_, graph, 0);
    cudaGraphDestroy(graph);
    CUSYNC_CUDA_CHECK(instantiated);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  ~CapturedGraph() { cudaGraphExecDestroy(exec_); }

  void launch(cudaStream_t stream) const { CUSYNC_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace cusync::gpu_test
