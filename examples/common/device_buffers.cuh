// Device buffers and the checks every example runs: fresh random inputs, poisoned outputs, comparison against a
// reference. Host code with small kernels; include from one .cu file per program.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cusync/error.h"

namespace cusync::examples {

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) { CUSYNC_CUDA_CHECK(cudaMalloc(&data_, bytes())); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data_); }
  T* get() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t count_;
};

namespace detail {
__device__ inline std::uint32_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}
// Kernels defined in a header are templates, so that several translation units may include it.
template <int = 0>
__global__ void fillUniform(__half* data, std::size_t count, std::uint64_t seed, float scale) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float u = (mix(seed * 0x9E3779B97F4A7C15ull + i) >> 8) * (1.0f / 16777216.0f);  // [0, 1)
    data[i] = __float2half((2.0f * u - 1.0f) * scale);
  }
}
template <int = 0>
__global__ void fillBits(std::uint16_t* data, std::size_t count, std::uint16_t bits) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    data[i] = bits;
}
// Sums (out - ref)^2 and ref^2 in double, and counts non-finite outputs.
template <int = 0>
__global__ void compare(const __half* out, const __half* ref, std::size_t count, double* sums,
                               unsigned long long* nonFinite) {
  double diff = 0, norm = 0;
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const double o = __half2float(out[i]), r = __half2float(ref[i]);
    if (!isfinite(o)) ++bad;
    diff += (o - r) * (o - r);
    norm += r * r;
  }
  atomicAdd(&sums[0], diff);
  atomicAdd(&sums[1], norm);
  atomicAdd(nonFinite, bad);
}
}  // namespace detail

// Uniform in [-scale, scale); a new seed gives new data.
inline void fillRandom(DeviceBuffer<__half>& buffer, std::uint64_t seed, float scale, cudaStream_t stream = nullptr) {
  detail::fillUniform<><<<1024, 256, 0, stream>>>(buffer.get(), buffer.size(), seed, scale);
  CUSYNC_CUDA_CHECK(cudaGetLastError());
}

// Fills with NaN so that an element no kernel wrote cannot pass a check.
inline void poison(DeviceBuffer<__half>& buffer, cudaStream_t stream = nullptr) {
  detail::fillBits<><<<1024, 256, 0, stream>>>(reinterpret_cast<std::uint16_t*>(buffer.get()), buffer.size(), 0x7E00);
  CUSYNC_CUDA_CHECK(cudaGetLastError());
}

struct Comparison {
  double relativeError;           // ||out - ref|| / ||ref||
  unsigned long long nonFinite;   // NaN or Inf outputs (unwritten elements stay NaN)
  bool passes(double bound) const { return nonFinite == 0 && relativeError <= bound; }
};

inline Comparison compareToReference(const DeviceBuffer<__half>& out, const DeviceBuffer<__half>& ref) {
  DeviceBuffer<double> sums(2);
  DeviceBuffer<unsigned long long> nonFinite(1);
  CUSYNC_CUDA_CHECK(cudaMemset(sums.get(), 0, sums.bytes()));
  CUSYNC_CUDA_CHECK(cudaMemset(nonFinite.get(), 0, nonFinite.bytes()));
  detail::compare<><<<512, 256>>>(out.get(), ref.get(), out.size(), sums.get(), nonFinite.get());
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  double host[2];
  unsigned long long bad = 0;
  CUSYNC_CUDA_CHECK(cudaMemcpy(host, sums.get(), sizeof(host), cudaMemcpyDeviceToHost));
  CUSYNC_CUDA_CHECK(cudaMemcpy(&bad, nonFinite.get(), sizeof(bad), cudaMemcpyDeviceToHost));
  return Comparison{host[1] > 0 ? std::sqrt(host[0] / host[1]) : (host[0] > 0 ? INFINITY : 0.0), bad};
}

}  // namespace cusync::examples
