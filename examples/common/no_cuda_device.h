// What a GPU program of examples/ and bench/ does on a machine without a CUDA device: it says so in its own words and
// exits with kNoCudaDevice, which ctest's SKIP_RETURN_CODE reports as skipped, never as passed. Host header.
//
// Each program keeps its message and its stream: tests and scripts read them (scripts/gpu_sanitize.sh looks for
// "SKIPPED"). Programs call missingCudaDevice after their command line is parsed, so that --help and a bad command line
// are answered on a machine without a GPU too.
#pragma once

#include <cstdio>
#include <string>

#include <cuda_runtime_api.h>

namespace cusync::examples {

// Exit status of a program that found no CUDA device (ctest's SKIP_RETURN_CODE).
inline constexpr int kNoCudaDevice = 77;

// True when the CUDA runtime sees no device, after `message` and a newline are printed on `stream`; the caller then
// returns kNoCudaDevice from main. A failed query (no driver, a driver older than the runtime) counts as no device.
inline bool missingCudaDevice(std::FILE* stream, const std::string& message) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) return false;
  std::fprintf(stream, "%s\n", message.c_str());
  return true;
}

}  // namespace cusync::examples
