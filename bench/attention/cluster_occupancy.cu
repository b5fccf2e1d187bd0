// How many 2x1 thread-block clusters the GPU co-schedules, against single blocks, at the shared-memory sizes of the
// hooked GEMMs (100-220 KB, one block per SM). The attention chain's split-K choice counts a wave of a 2x1 GEMM as
// SMs / 2 clusters (66 on the H100); a cluster's blocks must share a GPC, so fewer may fit at once. If so, the
// "whole" tiles of a split last wave spill into a second round. That is one candidate for why GPT-3's 2x1 QKV GEMM at
// 512 tokens ran about as slowly with its last wave split (120-137 us in the chain) as unsplit (137 us alone), where
// one round of whole tiles and a fifth of a tile should take about 85; it cannot be all of it, since the GEMM in
// single blocks gained no more from the split (docs/BENCHMARKS.md, issue 14, sessions 13-14). Written at the end of
// session 14 and not yet run.
//
// Usage: cluster_occupancy   (exit 77 without a CUDA device)
#include <cstdio>

#include <cuda_runtime.h>

#include "common/no_cuda_device.h"

namespace {

__global__ void __cluster_dims__(2, 1, 1) pairedBlocks(int* sink) {
  extern __shared__ int shared[];
  if (sink) sink[0] = shared[0];
}
__global__ void singleBlocks(int* sink) {
  extern __shared__ int shared[];
  if (sink) sink[0] = shared[0];
}

}  // namespace

int main() {
  if (cusync::examples::missingCudaDevice(stdout, "SKIPPED: no CUDA device")) return cusync::examples::kNoCudaDevice;
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, 0);
  std::printf("%s: %d SMs\n", properties.name, properties.multiProcessorCount);
  for (int kilobytes : {100, 150, 200, 220}) {
    const std::size_t sharedBytes = std::size_t(kilobytes) * 1024;
    cudaFuncSetAttribute(pairedBlocks, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes));
    cudaFuncSetAttribute(singleBlocks, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes));
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(2 * properties.multiProcessorCount);
    config.blockDim = dim3(384);
    config.dynamicSmemBytes = sharedBytes;
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 2;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
    int clusters = -1, blocksPerSm = -1;
    const cudaError_t status = cudaOccupancyMaxActiveClusters(&clusters, pairedBlocks, &config);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocksPerSm, singleBlocks, 384, sharedBytes);
    std::printf("%3d KB of shared memory: %d 2x1 clusters at once (%s), %d blocks; single blocks: %d per SM, %d\n",
                kilobytes, clusters, cudaGetErrorString(status), 2 * clusters, blocksPerSm,
                blocksPerSm * properties.multiProcessorCount);
  }
  return 0;
}
