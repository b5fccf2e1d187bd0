// The device ceilings a chain's floor is computed from, measured in the process that times the chains: the dense
// fp16 GEMM rate (cuBLASLt, 8192^3) and the one-pass read bandwidth (common/read_bandwidth.cuh), as
// examples/mlp/ceilings.h measures them for the MLPs. The floor of a chain is max(flops / rate, bytes / bandwidth).
// Host code.
#pragma once

#include <algorithm>

#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/cublas_gemm.cuh"
#include "common/device_buffers.cuh"
#include "common/graph_timer.cuh"
#include "common/read_bandwidth.cuh"

namespace cusync::examples {

struct ConvCeilings {
  double tflops = 0;   // measured dense fp16 GEMM rate; 0: not measured
  double readGBs = 0;  // measured one-pass read bandwidth; 0: not measured
  double floorMicroseconds(double flops, double bytes) const {
    if (tflops <= 0 || readGBs <= 0) return 0;
    return std::max(flops / (tflops * 1e12), bytes / (readGBs * 1e9)) * 1e6;
  }
};

inline ConvCeilings measureConvCeilings(cudaStream_t stream) {
  const int n = 8192;
  cublasLtHandle_t handle;
  checkCublas(cublasLtCreate(&handle), "Create");
  const std::size_t workspaceBytes = std::size_t(32) << 20;
  DeviceBuffer<char> workspace(workspaceBytes);
  DeviceBuffer<__half> a(std::size_t(n) * n), b(std::size_t(n) * n), c(std::size_t(n) * n);
  fillRandom(a, 11, 1.0f, stream);
  fillRandom(b, 12, 1.0f, stream);
  ConvCeilings ceilings;
  {
    CublasLtGemm gemm(handle, n, n, n, false, workspace.get(), workspaceBytes);
    const auto time =
        timeWithGraph([&](cudaStream_t s) { gemm.run(a.get(), b.get(), c.get(), s); }, stream, 5, 2, 7);
    ceilings.tflops = 2.0 * n * double(n) * n / (time.medianMicroseconds * 1e-6) / 1e12;
  }
  cublasLtDestroy(handle);
  ceilings.readGBs = measureReadBandwidthGBs(stream);
  return ceilings;
}

}  // namespace cusync::examples
