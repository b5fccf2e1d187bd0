// The device's one-pass read bandwidth: a kernel that reads a large buffer once (16-byte loads, several in flight
// per thread) and writes one word per block. This, not a copy's rate, is the floor for a workload that reads its
// weights once and writes little (a copy also pays for its writes and their read-modify traffic). Host + device.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "common/graph_timer.cuh"
#include "cusync/error.h"

namespace cusync::examples {

namespace detail {
// A template so that a header can define it (see wait_kernel.cuh).
template <int = 0>
__global__ void __launch_bounds__(512) readOnce(const uint4* data, std::size_t count, std::uint32_t* sink) {
  constexpr int kInFlight = 4;
  std::uint32_t folded = 0;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  for (; i + (kInFlight - 1) * stride < count; i += kInFlight * stride) {
    uint4 v[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) v[j] = __ldcs(data + i + j * stride);  // streaming: no L2 reuse expected
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) folded ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  for (; i < count; i += stride) {
    const uint4 v = __ldcs(data + i);
    folded ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  // Keeps the loads alive; one store per block is noise against gigabytes read.
  folded = __reduce_xor_sync(0xffffffffu, folded);
  if (threadIdx.x % 32 == 0) atomicXor(sink + blockIdx.x, folded);
}
}  // namespace detail

// GB/s of one pass over `bytes` (default 4 GiB, far beyond L2), median of graph replays.
inline double measureReadBandwidthGBs(cudaStream_t stream, std::size_t bytes = std::size_t(4) << 30) {
  int device = 0, multiprocessors = 0;
  CUSYNC_CUDA_CHECK(cudaGetDevice(&device));
  CUSYNC_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  const unsigned blocks = unsigned(multiprocessors) * 4;
  DeviceBuffer<uint4> data(bytes / sizeof(uint4));
  DeviceBuffer<std::uint32_t> sink(blocks);
  CUSYNC_CUDA_CHECK(cudaMemset(data.get(), 0x5a, data.bytes()));
  CUSYNC_CUDA_CHECK(cudaMemset(sink.get(), 0, sink.bytes()));
  const auto timing = timeWithGraph(
      [&](cudaStream_t s) {
        detail::readOnce<><<<blocks, 512, 0, s>>>(data.get(), data.size(), sink.get());
        CUSYNC_CUDA_CHECK(cudaGetLastError());
      },
      stream, 3, 2, 7);
  return double(data.bytes()) / (timing.medianMicroseconds * 1e-6) / 1e9;
}

}  // namespace cusync::examples
