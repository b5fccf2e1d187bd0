// The device's measured ceilings and the floor they put under a workload: max(flops / measured GEMM rate, bytes /
// measured one-pass read bandwidth). A copy's rate is reported too, but it is not the floor: an MLP reads its
// weights once and writes little, and the copy (2.4 TB/s counted as read + write) put the floor above cuBLAS at
// small M. Used by the MLP and convolution examples. Host header.
#pragma once

#include <algorithm>
#include <cstddef>

#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/cublas_gemm.cuh"
#include "common/device_buffers.cuh"
#include "common/graph_timer.cuh"
#include "common/read_bandwidth.cuh"

namespace cusync::examples {

struct Ceilings {
  double tflops = 0;   // measured dense fp16 GEMM rate; 0: not measured
  double copyGBs = 0;  // measured device-to-device copy (read + write), for reference
  double readGBs = 0;  // measured one-pass read (common/read_bandwidth.cuh): the floor's bandwidth
};

inline Ceilings measureCeilings(cublasLtHandle_t handle, void* workspace, std::size_t workspaceBytes,
                                cudaStream_t stream) {
  const int n = 8192;
  DeviceBuffer<__half> a(std::size_t(n) * n), b(std::size_t(n) * n), c(std::size_t(n) * n);
  fillRandom(a, 11, 1.0f);
  fillRandom(b, 12, 1.0f);
  CublasLtGemm gemm(handle, n, n, n, false, workspace, workspaceBytes);
  auto gemmTime = timeWithGraph([&](cudaStream_t s) { gemm.run(a.get(), b.get(), c.get(), s); }, stream, 5, 2, 7);
  const std::size_t copyBytes = std::size_t(1) << 30;
  DeviceBuffer<char> src(copyBytes), dst(copyBytes);
  CUSYNC_CUDA_CHECK(cudaMemset(src.get(), 1, copyBytes));
  auto copyTime = timeWithGraph(
      [&](cudaStream_t s) {
        CUSYNC_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), copyBytes, cudaMemcpyDeviceToDevice, s));
      },
      stream, 5, 2, 7);
  return Ceilings{2.0 * n * double(n) * n / (gemmTime.medianMicroseconds * 1e-6) / 1e12,
                  2.0 * copyBytes / (copyTime.medianMicroseconds * 1e-6) / 1e9, measureReadBandwidthGBs(stream)};
}

// The time below which no implementation can go: compute at the measured rate or traffic at the measured read
// bandwidth; 0 when the ceilings were not measured (a check-only run).
inline double floorMicroseconds(double flops, double bytes, const Ceilings& ceilings) {
  if (ceilings.tflops <= 0 || ceilings.readGBs <= 0) return 0;
  return std::max(flops / (ceilings.tflops * 1e12), bytes / (ceilings.readGBs * 1e9)) * 1e6;
}

}  // namespace cusync::examples
