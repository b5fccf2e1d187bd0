// Does the weights' layout in memory limit how fast a tiled GEMM streams them? At small M the MLP's GEMMs are
// weight-bound: every block streams its column tile's weights, box after box, through TMA. In the row-major
// (K-contiguous) layout every box of `rows` x 64 fp16 is `rows` separate 128-byte pieces, one per weight row, 2K
// bytes apart; a prepacked layout (each box stored contiguously, in the order a block reads them) makes each box one
// contiguous run. This probe streams the MLPs' weight shapes both ways, with the tile heights, k-splits and pipeline
// depths the fused chain uses, and nothing else (no MMA, no A operand, no synchronization), beside a one-pass read of
// the same bytes (the floor's bandwidth). If the prepacked stream is not faster, a prepacked weight layout cannot
// make the chain faster either. No cusync kernel: the ring's mbarrier and copy primitives, the examples' graph timer
// and one-pass read kernel.
//
//   build: the CMake target weight_layout_probe (sm_90a); run: weight_layout_probe [--csv path]
//
// Each launch: one block per (column tile, k-part), one thread issuing a box per k-block into a ring of `stages`
// slots, waiting for a slot's previous box before reusing it. Two copies of the weights alternate between launches
// (each larger than L2 on the H100 and H200), so every launch reads from DRAM. Median of 9 graph replays of 4 launches
// (examples/common/graph_timer.cuh; session 25's recorded run timed the same replays with a loop of its own, without
// the timer's stream hold before each sample).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include "common/device_buffers.cuh"
#include "common/graph_timer.cuh"
#include "common/read_bandwidth.cuh"  // detail::readOnce: the floor's one-pass read kernel
#include "cusync/bulk_copy_ring.cuh"
#include "cusync/error.h"

namespace {

constexpr int kBoxColumns = 64;  // fp16 elements of K per box: 128 bytes, one 128-byte swizzle row, as the GEMMs load
constexpr int kMaxStages = 16;

__device__ __forceinline__ void copyBox4d(void* destination, const void* map, int c0, int c1, int c2, int c3,
                                          std::uint64_t* barrier) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];" ::"r"(cusync::ring::sharedAddress(destination)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
      "r"(cusync::ring::sharedAddress(barrier))
      : "memory");
#endif
}

// One block per (column tile, k-part); blockIdx.x = part * tiles + tile, so the first wave spreads over column tiles.
__global__ void __launch_bounds__(32, 1)
    streamWeights(const __grid_constant__ CUtensorMap map, bool prepacked, int tiles, int kBlocks, int parts,
                  int rows, int stages, std::uint32_t* sink) {
  extern __shared__ __align__(1024) unsigned char slots[];
  __shared__ std::uint64_t full[kMaxStages];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < stages; ++s) cusync::ring::init(&full[s], 1);
  cusync::ring::fenceInit();
  const int tile = blockIdx.x % tiles, part = blockIdx.x / tiles;
  const int begin = kBlocks * part / parts, end = kBlocks * (part + 1) / parts;
  const std::uint32_t boxBytes = std::uint32_t(rows) * kBoxColumns * 2;
  for (int kb = begin, i = 0; kb < end; ++kb, ++i) {
    const int s = i % stages;
    if (i >= stages) cusync::ring::wait(&full[s], std::uint32_t((i / stages - 1) & 1));
    cusync::ring::arriveExpectingBytes(&full[s], boxBytes);
    void* slot = slots + std::size_t(s) * boxBytes;
    if (prepacked)
      copyBox4d(slot, &map, 0, 0, kb, tile, &full[s]);
    else
      cusync::ring::copyBox(slot, &map, kb * kBoxColumns, tile * rows, &full[s]);
  }
  const int issued = end - begin;
  for (int i = issued > stages ? issued - stages : 0; i < issued; ++i)
    cusync::ring::wait(&full[i % stages], std::uint32_t((i / stages) & 1));
  sink[blockIdx.x] = slots[threadIdx.x];  // keeps nothing alive that matters; the copies completed above
}

// A 128B-swizzled fp16 tensor map of `rank` dimensions (innermost first) with boxes of `box`, as the GEMMs load.
CUtensorMap swizzledHalfMap(void* base, cuuint32_t rank, const cuuint64_t* dims, const cuuint64_t* strides,
                            const cuuint32_t* box, const char* what) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUSYNC_CUDA_CHECK(
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess) throw cusync::Error("no cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }();
  const cuuint32_t elementStrides[4] = {1, 1, 1, 1};
  CUtensorMap map{};
  if (encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, rank, base, dims, strides, box, elementStrides,
             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
    throw cusync::Error(std::string(what) + " map refused");
  return map;
}

// Row-major [n][k] fp16: boxes of `rows` x 64 at (column kb*64, row tile*rows).
CUtensorMap rowMajorMap(void* base, int n, int k, int rows) {
  const cuuint64_t dims[2] = {cuuint64_t(k), cuuint64_t(n)};
  const cuuint64_t strides[1] = {cuuint64_t(k) * 2};
  const cuuint32_t box[2] = {kBoxColumns, cuuint32_t(rows)};
  return swizzledHalfMap(base, 2, dims, strides, box, "row-major");
}

// Prepacked [n/rows][k/64][rows][64]: box (64, rows, 1, 1) at (0, 0, kb, tile), one contiguous run per box.
CUtensorMap prepackedMap(void* base, int n, int k, int rows) {
  const cuuint64_t dims[4] = {kBoxColumns, cuuint64_t(rows), cuuint64_t(k / kBoxColumns), cuuint64_t(n / rows)};
  const cuuint64_t boxBytes = cuuint64_t(rows) * kBoxColumns * 2;
  const cuuint64_t strides[3] = {kBoxColumns * 2, boxBytes, boxBytes * (k / kBoxColumns)};
  const cuuint32_t box[4] = {kBoxColumns, cuuint32_t(rows), 1, 1};
  return swizzledHalfMap(base, 4, dims, strides, box, "prepacked");
}

// Median us per launch of 4 launches captured in a graph (3 warm-up replays, 9 timed: examples/common/graph_timer.cuh);
// `launch(i, stream)` gets the launch's index, so that launches can alternate between the two weight copies.
template <class Launch>
double medianMicroseconds(Launch&& launch, cudaStream_t stream) {
  int index = 0;
  return cusync::examples::timeWithGraph([&](cudaStream_t s) { launch(index++, s); }, stream, 4, 3, 9)
      .medianMicroseconds;
}

struct Shape {
  const char* name;
  int n, k;  // the weight is [n][k], K contiguous: what the GEMM's B operand reads
};

// The table (and the CSV when `csv` is given) for every shape, layout, tile height, split and depth.
void probe(std::FILE* csv) {
  cudaDeviceProp prop{};
  CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major < 9) {
    std::printf("weight_layout_probe needs sm_90 (TMA); this device is sm_%d%d\n", prop.major, prop.minor);
    return;
  }
  cudaStream_t stream;
  CUSYNC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUSYNC_CUDA_CHECK(cudaFuncSetAttribute(streamWeights, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));

  // GPT-3's GEMM 1 and GEMM 2 weights per GPU, LLaMA-65B's GEMM 2 (K = 2752 = 43 x 64) and its paired GEMM 1
  // padded to 2 x 2816 columns (the fused chain's 176-column paired tiles: 32 tiles).
  const Shape shapes[] = {{"gpt3_w1", 6144, 12288}, {"gpt3_w2", 12288, 6144}, {"llama_w2", 8192, 2752},
                          {"llama_w1_paired", 5632, 8192}};
  std::size_t maxElements = 0;
  for (const Shape& s : shapes) maxElements = std::max(maxElements, std::size_t(s.n) * s.k);
  using cusync::examples::DeviceBuffer;
  DeviceBuffer<__half> weights[2] = {DeviceBuffer<__half>(maxElements), DeviceBuffer<__half>(maxElements)};
  for (DeviceBuffer<__half>& w : weights) CUSYNC_CUDA_CHECK(cudaMemset(w.get(), 0x3c, w.bytes()));
  DeviceBuffer<std::uint32_t> sink(1 << 18);
  CUSYNC_CUDA_CHECK(cudaMemset(sink.get(), 0, sink.bytes()));

  if (csv) std::fprintf(csv, "device,shape,layout,rows,parts,blocks,stages,in_flight_kb,us,gbs,of_read\n");
  std::printf("device: %s (%d SMs)\n", prop.name, prop.multiProcessorCount);
  std::printf("%-16s %-9s %4s %5s %6s %6s %8s %8s %8s %7s\n", "shape", "layout", "rows", "parts", "blocks", "stages",
              "KB/SM", "us", "GB/s", "of read");
  for (const Shape& s : shapes) {
    const std::size_t bytes = std::size_t(s.n) * s.k * 2;
    const unsigned readBlocks = unsigned(prop.multiProcessorCount) * 4;
    const double readUs = medianMicroseconds(
        [&](int i, cudaStream_t st) {
          cusync::examples::detail::readOnce<><<<readBlocks, 512, 0, st>>>(
              reinterpret_cast<const uint4*>(weights[i % 2].get()), bytes / 16, sink.get());
        },
        stream);
    const double readGBs = bytes / (readUs * 1e-6) / 1e9;
    std::printf("%-16s %-9s %4s %5s %6u %6s %8s %8.1f %8.0f %7.3f\n", s.name, "read-once", "-", "-", readBlocks, "-",
                "-", readUs, readGBs, 1.0);
    if (csv)
      std::fprintf(csv, "%s,%s,read-once,0,0,%u,0,0,%.2f,%.0f,1.000\n", prop.name, s.name, readBlocks, readUs, readGBs);
    const int kBlocks = s.k / kBoxColumns;
    for (int rows : {48, 96, 128, 176}) {
      if (s.n % rows) continue;
      const int tiles = s.n / rows;
      for (int parts : {1, 2}) {
        for (int stages : {4, 8, 12}) {
          const int slotBytes = rows * kBoxColumns * 2;
          if (stages * slotBytes > 200 * 1024) continue;
          for (bool prepacked : {false, true}) {
            CUtensorMap maps[2];
            for (int i = 0; i < 2; ++i)
              maps[i] = prepacked ? prepackedMap(weights[i].get(), s.n, s.k, rows)
                                  : rowMajorMap(weights[i].get(), s.n, s.k, rows);
            const unsigned blocks = unsigned(tiles * parts);
            const double us = medianMicroseconds(
                [&](int i, cudaStream_t st) {
                  streamWeights<<<blocks, 32, std::size_t(stages) * slotBytes, st>>>(
                      maps[i % 2], prepacked, tiles, kBlocks, parts, rows, stages, sink.get());
                },
                stream);
            const double gbs = bytes / (us * 1e-6) / 1e9;
            const char* layout = prepacked ? "prepacked" : "row-major";
            std::printf("%-16s %-9s %4d %5d %6u %6d %8d %8.1f %8.0f %7.3f\n", s.name, layout, rows, parts, blocks,
                        stages, stages * slotBytes / 1024, us, gbs, gbs / readGBs);
            if (csv)
              std::fprintf(csv, "%s,%s,%s,%d,%d,%u,%d,%d,%.2f,%.0f,%.3f\n", prop.name, s.name, layout, rows, parts,
                           blocks, stages, stages * slotBytes / 1024, us, gbs, gbs / readGBs);
          }
        }
      }
    }
  }
  CUSYNC_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

int main(int argc, char** argv) {
  const char* csvPath = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csvPath = argv[++i];
    else {
      std::fprintf(stderr, "usage: weight_layout_probe [--csv path]\n");
      return 2;
    }
  }
  std::FILE* csv = csvPath ? std::fopen(csvPath, "w") : nullptr;
  if (csvPath && !csv) {
    std::fprintf(stderr, "weight_layout_probe: cannot write %s\n", csvPath);
    return 2;
  }
  int status = 0;
  try {
    probe(csv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weight_layout_probe: %s\n", e.what());
    status = 1;
  }
  if (csv) std::fclose(csv);
  return status;
}
