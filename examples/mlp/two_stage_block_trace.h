// One traced run of a two-stage MLP chain launched a GEMM per stage (mlp_example's pairs, mlp_fused_example's GEMV
// chains), written as rows in attention_example --trace's format (bench/attention/summarize_block_trace.py reads
// them): per block, when it started, when its wait for GEMM-1 tiles was over (CUTLASS GEMMs: its first unit's last
// MMA) and when it finished, in us since the chain's first block. Host code, CUDA runtime.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "cusync/block_trace.h"
#include "cusync/error.h"

namespace cusync::examples {

inline constexpr const char* kBlockTraceCsvHeader =
    "variant,configuration,stage,block,sm,tile_x,tile_y,part,start_us,waited_us,done_us";

// A trace CSV opened with its header line, or null when `path` is empty; a path that cannot be written exits 2.
inline std::FILE* openTraceCsv(const std::string& path, const char* header, const std::string& program) {
  if (path.empty()) return nullptr;
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    std::fprintf(stderr, "%s: cannot write %s\n", program.c_str(), path.c_str());
    std::exit(2);
  }
  std::fprintf(file, "%s\n", header);
  return file;
}

// Three untraced runs of `chain` (enqueue(stream)), then one with a record per block of each stage
// (chain.blocksOfStage(0 | 1) records, chain.setBlockTraces), appended to `file` under `variant` and `config`.
template <class Chain, class Enqueue>
void writeTwoStageBlockTrace(Chain& chain, Enqueue enqueue, const std::string& variant, const std::string& config,
                             std::FILE* file, cudaStream_t stream) {
  DeviceBuffer<BlockTrace> first(chain.blocksOfStage(0)), second(chain.blocksOfStage(1));
  for (int i = 0; i < 3; ++i) enqueue(stream);
  CUSYNC_CUDA_CHECK(cudaMemsetAsync(first.get(), 0, first.bytes(), stream));
  CUSYNC_CUDA_CHECK(cudaMemsetAsync(second.get(), 0, second.bytes(), stream));
  chain.setBlockTraces(first.get(), second.get());
  enqueue(stream);
  chain.setBlockTraces(nullptr, nullptr);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<BlockTrace> records(first.size() + second.size());
  CUSYNC_CUDA_CHECK(cudaMemcpy(records.data(), first.get(), first.bytes(), cudaMemcpyDeviceToHost));
  CUSYNC_CUDA_CHECK(cudaMemcpy(records.data() + first.size(), second.get(), second.bytes(), cudaMemcpyDeviceToHost));
  std::uint64_t origin = UINT64_MAX;
  for (const BlockTrace& t : records)
    if (t.start != 0) origin = std::min(origin, t.start);
  for (const BlockTrace& t : records)
    if (t.start != 0)
      std::fprintf(file, "%s,%s,%s,%u,%u,%u,%u,%u,%.3f,%.3f,%.3f\n", variant.c_str(), config.c_str(),
                   t.stage == 0 ? "gemm1" : "gemm2", t.block, t.sm, t.tileX, t.tileY, t.part,
                   (t.start - origin) / 1000.0, (t.waited - origin) / 1000.0, (t.done - origin) / 1000.0);
}

}  // namespace cusync::examples
