// Host-side errors of the runtime: misuse (wrong pairing, bad tile order) and failed CUDA calls are reported as
// exceptions carrying what went wrong and where, never ignored. Host-only header.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace cusync {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
inline void throwIfCudaFailed(cudaError_t status, const char* expression, const char* file, int line) {
  if (status != cudaSuccess)
    throw Error(std::string(file) + ":" + std::to_string(line) + ": " + expression + " failed: " +
                cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}
}  // namespace detail

}  // namespace cusync

#define CUSYNC_CUDA_CHECK(expression) ::cusync::detail::throwIfCudaFailed((expression), #expression, __FILE__, __LINE__)
