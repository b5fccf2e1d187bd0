// Headers the rewriter adds to every parse so that Clang 19 accepts CUDA 13 (see cuda_shim/). Their contents are
// compiled into the tool and written to a private temporary directory for the duration of a run, so the tool works
// wherever it is installed.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cusync::tile_rewriter {

// (file name, contents) of each shim header.
std::vector<std::pair<std::string, std::string>> cudaShimFiles();

// Writes the shim headers to a fresh temporary directory and removes it again on destruction.
class CudaShimDirectory {
public:
  CudaShimDirectory();
  ~CudaShimDirectory();
  CudaShimDirectory(const CudaShimDirectory&) = delete;
  CudaShimDirectory& operator=(const CudaShimDirectory&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }

private:
  std::string path_;
  std::vector<std::string> files_;
};

}  // namespace cusync::tile_rewriter
