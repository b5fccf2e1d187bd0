// The cuSync paper's maximum-overhead experiment: two dependent copy kernels of one full wave each (SMs x maximum
// occupancy blocks, 16 KB per block); block i of the consumer reads what block i of the producer wrote (TileSync).
// The copies do almost no work, so what separates the variants is the synchronization between the kernels:
//   stream                  consumer after producer on one stream (the baseline)
//   cusync + wait-kernel    producer and consumer on two streams, the paper's wait-kernel, per-tile semaphores
//   cusync + PDL            programmatic dependent launch on one stream, per-tile semaphores
//   cusync + PDL + hw order the same with "avoid custom order" (each block copies its own blockIdx tile)
//   PDL + grid sync         programmatic launch, consumer calls cudaGridDependencySynchronize (no semaphores)
// Each variant is timed as a CUDA graph of many pairs, after warm-up, as the median of repeats; every repeat uses a
// fresh random input and checks the consumer's output against it. Prints a table last; --csv writes it as CSV.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "common/command_line_numbers.h"
#include "common/no_cuda_device.h"
#include "cusync/cusync.cuh"

namespace {

using namespace cusync;

constexpr int kThreads = 128;
constexpr std::size_t kBytesPerBlock = 16 * 1024;
constexpr std::size_t kVectorsPerBlock = kBytesPerBlock / sizeof(uint4);
constexpr int kVectorsPerThread = static_cast<int>(kVectorsPerBlock / kThreads);
static_assert(kVectorsPerBlock % kThreads == 0);

// ---- Kernels ---------------------------------------------------------------------------------------------------

// Copies 16 KB chunk `chunk`: each thread issues all its 16-byte loads before its first store. No __restrict__:
// with it nvcc emits non-coherent loads (ld.global.nc), which are only valid for data that no kernel writes while
// this one runs, and a cusync consumer reads its producer's output while the producer kernel is still running.
// All variants share this copy so that they differ only in how they synchronize.
__device__ __forceinline__ void copyChunk(const uint4* input, uint4* output, std::uint32_t chunk) {
  const std::size_t base = std::size_t(chunk) * kVectorsPerBlock + threadIdx.x;
  uint4 values[kVectorsPerThread];
#pragma unroll
  for (int i = 0; i < kVectorsPerThread; ++i) values[i] = input[base + i * kThreads];
#pragma unroll
  for (int i = 0; i < kVectorsPerThread; ++i) output[base + i * kThreads] = values[i];
}

__global__ void __launch_bounds__(kThreads) plainCopy(const uint4* input, uint4* output) {
  copyChunk(input, output, blockIdx.x);
}

__global__ void __launch_bounds__(kThreads) cusyncProducerCopy(StageView self, const uint4* input, uint4* output) {
  triggerDependentLaunch();
  const TileTicket ticket = blockAcquireTile(self);
  copyChunk(input, output, ticket.tile.x);
  blockPost<TileSync>(self, ticket.tile);
}

__global__ void __launch_bounds__(kThreads) cusyncConsumerCopy(StageView self, InputView<TileSync> producer,
                                                               const uint4* input, uint4* output) {
  const TileTicket ticket = blockAcquireTile(self);
  blockWait(producer, ticket.tile, ticket, self);
  copyChunk(input, output, ticket.tile.x);
}

__global__ void __launch_bounds__(kThreads) gridSyncProducerCopy(const uint4* input, uint4* output) {
  triggerDependentLaunch();
  copyChunk(input, output, blockIdx.x);
}

__global__ void __launch_bounds__(kThreads) gridSyncConsumerCopy(const uint4* input, uint4* output) {
  cudaGridDependencySynchronize();  // the whole producer grid has completed and its writes are visible
  copyChunk(input, output, blockIdx.x);
}

__device__ __host__ inline std::uint32_t hashWord(std::uint32_t seed, std::uint64_t index) {
  std::uint32_t h = seed ^ static_cast<std::uint32_t>(index) ^ static_cast<std::uint32_t>(index >> 32) * 0x9E3779B9u;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

__global__ void fillRandom(uint4* data, std::size_t vectors, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < vectors;
       i += std::size_t(gridDim.x) * blockDim.x)
    data[i] = uint4{hashWord(seed, 4 * i), hashWord(seed, 4 * i + 1), hashWord(seed, 4 * i + 2),
                    hashWord(seed, 4 * i + 3)};
}

__global__ void countDifferences(const uint4* a, const uint4* b, std::size_t vectors, unsigned long long* count) {
  unsigned long long differences = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < vectors;
       i += std::size_t(gridDim.x) * blockDim.x)
    differences += (a[i].x != b[i].x) + (a[i].y != b[i].y) + (a[i].z != b[i].z) + (a[i].w != b[i].w);
  if (differences) atomicAdd(count, differences);
}

// ---- Host helpers ----------------------------------------------------------------------------------------------

struct Options {
  std::string csvPath;
  int pairsPerGraph = 20;
  int repeats = 30;
  int warmup = 5;
  int blocksPerSmOverride = 0;  // 0: maximum occupancy
  int blocksOverride = 0;       // 0: SMs x blocks per SM; else this many blocks (at most one full wave)
};

using cusync::examples::exitWithUsageError;
using cusync::examples::integerArgument;
using cusync::examples::kNoCudaDevice;
using cusync::examples::missingCudaDevice;

constexpr const char* kProgram = "cusync_overhead_bench";
constexpr const char* kUsage =
    "Usage: cusync_overhead_bench [--csv PATH] [--pairs N] [--repeats N] [--warmup N] [--blocks-per-sm N] [--blocks N]\n"
    "Two dependent one-wave copy kernels: stream order, cusync + wait-kernel, cusync + PDL, PDL grid sync.\n"
    "default: one full wave, SMs x the kernels' maximum occupancy, of 16 KB blocks\n"
    "\n"
    "  --csv PATH          write the results as CSV\n"
    "  --pairs N           kernel pairs per timed CUDA graph (>= 1, default 20)\n"
    "  --repeats N         timed graph launches (>= 1, default 30)\n"
    "  --warmup N          untimed graph launches first (>= 0, default 5)\n"
    "  --blocks-per-sm N   blocks per SM (0: the kernels' maximum occupancy)\n"
    "  --blocks N          blocks in all (0: SMs x blocks per SM; at most one full wave)\n"
    "  --help              print this help\n"
    "\n"
    "Exit status: 0 done, 1 a wrong result or a CUDA error, 2 bad command line, 77 no CUDA device.\n";

// Before any CUDA call, so that a bad command line is reported on a machine without a GPU too.
Options parseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) exitWithUsageError(kProgram, flag + " needs a value");
      return argv[++i];
    };
    auto count = [&](long long minimum) { return int(integerArgument(kProgram, flag, value(), minimum, INT_MAX)); };
    if (flag == "--csv") options.csvPath = value();
    else if (flag == "--pairs") options.pairsPerGraph = count(1);
    else if (flag == "--repeats") options.repeats = count(1);
    else if (flag == "--warmup") options.warmup = count(0);
    else if (flag == "--blocks-per-sm") options.blocksPerSmOverride = count(0);
    else if (flag == "--blocks") options.blocksOverride = count(0);
    else if (flag == "--help" || flag == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else {
      exitWithUsageError(kProgram, "unknown option '" + flag + "'");
    }
  }
  return options;
}

template <class T>
struct DeviceBuffer {
  T* data = nullptr;
  explicit DeviceBuffer(std::size_t count) { CUSYNC_CUDA_CHECK(cudaMalloc(&data, count * sizeof(T))); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data); }
};

struct Graph {
  cudaGraphExec_t exec = nullptr;
  Graph(cudaStream_t stream, const std::function<void(cudaStream_t)>& enqueuePair, int pairs) {
    CUSYNC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int pair = 0; pair < pairs; ++pair) enqueuePair(stream);
    cudaGraph_t graph = nullptr;
    CUSYNC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    CUSYNC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CUSYNC_CUDA_CHECK(cudaGraphDestroy(graph));
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() { cudaGraphExecDestroy(exec); }
};

int occupancy(const void* kernel) {
  int blocks = 0;
  CUSYNC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreads, 0));
  return blocks;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Device-to-device copy bandwidth (bytes read + written per second) of a buffer far larger than L2, best of 10.
double measureCopyBandwidth(cudaStream_t stream) {
  const std::size_t bytes = std::size_t(512) << 20;
  DeviceBuffer<char> source(bytes), destination(bytes);
  CUSYNC_CUDA_CHECK(cudaMemsetAsync(source.data, 1, bytes, stream));
  cudaEvent_t start, stop;
  CUSYNC_CUDA_CHECK(cudaEventCreate(&start));
  CUSYNC_CUDA_CHECK(cudaEventCreate(&stop));
  float best = 1e30f;
  for (int i = 0; i < 12; ++i) {
    CUSYNC_CUDA_CHECK(cudaEventRecord(start, stream));
    CUSYNC_CUDA_CHECK(cudaMemcpyAsync(destination.data, source.data, bytes, cudaMemcpyDeviceToDevice, stream));
    CUSYNC_CUDA_CHECK(cudaEventRecord(stop, stream));
    CUSYNC_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUSYNC_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (i >= 2) best = std::min(best, ms);  // the first copies warm up clocks and the TLB
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return 2.0 * double(bytes) / (double(best) * 1e-3);
}

struct Variant {
  std::string name;
  std::function<void(cudaStream_t)> enqueuePair;
  std::vector<double> microsecondsPerPair;
  unsigned long long wrongWords = 0;
};

int run(const Options& options) {
  int device = 0;
  CUSYNC_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));

  // One full wave: the fewest blocks per SM any variant's kernels can keep resident, times the SMs.
  int blocksPerSm = std::min({occupancy(reinterpret_cast<const void*>(plainCopy)),
                              occupancy(reinterpret_cast<const void*>(cusyncProducerCopy)),
                              occupancy(reinterpret_cast<const void*>(cusyncConsumerCopy)),
                              occupancy(reinterpret_cast<const void*>(gridSyncProducerCopy)),
                              occupancy(reinterpret_cast<const void*>(gridSyncConsumerCopy))});
  if (options.blocksPerSmOverride > 0) blocksPerSm = options.blocksPerSmOverride;
  std::uint32_t blocks = static_cast<std::uint32_t>(blocksPerSm * properties.multiProcessorCount);
  if (options.blocksOverride > 0) {
    // More than a wave would measure something else (the tail effect cusync removes, not its overhead).
    if (static_cast<std::uint32_t>(options.blocksOverride) > blocks)
      throw std::runtime_error("--blocks " + std::to_string(options.blocksOverride) + " exceeds one wave (" +
                               std::to_string(blocks) + " blocks)");
    blocks = static_cast<std::uint32_t>(options.blocksOverride);
  }
  const std::size_t vectors = std::size_t(blocks) * kVectorsPerBlock;
  const std::size_t bytesPerKernel = std::size_t(blocks) * kBytesPerBlock;

  DeviceBuffer<uint4> input(vectors), intermediate(vectors), output(vectors);
  DeviceBuffer<unsigned long long> differences(1);
  cudaStream_t stream, sideStream;
  CUSYNC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUSYNC_CUDA_CHECK(cudaStreamCreateWithFlags(&sideStream, cudaStreamNonBlocking));
  cudaEvent_t fork, join, start, stop;
  CUSYNC_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CUSYNC_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  CUSYNC_CUDA_CHECK(cudaEventCreate(&start));
  CUSYNC_CUDA_CHECK(cudaEventCreate(&stop));

  const dim3 grid(blocks), block(kThreads);
  const GridShape tiles{blocks, 1, 1};
  // Each cusync variant has its own stages, so tile counters and semaphores count only its own pairs.
  Stage waitKernelProducer("wk_producer", tiles), waitKernelConsumer("wk_consumer", tiles);
  Stage pdlProducer("pdl_producer", tiles), pdlConsumer("pdl_consumer", tiles);
  Stage hardwareProducer("hw_producer", tiles), hardwareConsumer("hw_consumer", tiles);
  for (Stage* producer : {&waitKernelProducer, &pdlProducer, &hardwareProducer}) producer->setOutputPolicy<TileSync>();
  hardwareProducer.useHardwareOrder(true);
  hardwareConsumer.useHardwareOrder(true);

  std::vector<Variant> variants;
  variants.push_back({"stream", [&](cudaStream_t s) {
                        plainCopy<<<grid, block, 0, s>>>(input.data, intermediate.data);
                        plainCopy<<<grid, block, 0, s>>>(intermediate.data, output.data);
                        CUSYNC_CUDA_CHECK(cudaGetLastError());
                      }});
  variants.push_back({"cusync + wait-kernel", [&](cudaStream_t s) {
                        CUSYNC_CUDA_CHECK(cudaEventRecord(fork, s));
                        CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(sideStream, fork, 0));
                        launchKernel(cusyncProducerCopy, grid, block, 0, s, LaunchOrdering::StreamOrder, waitKernelProducer.view(),
                                     input.data, intermediate.data);
                        launchWaitKernel(waitKernelProducer, waitKernelConsumer, sideStream);
                        launchKernel(cusyncConsumerCopy, grid, block, 0, sideStream, LaunchOrdering::StreamOrder,
                                     waitKernelConsumer.view(),
                                     waitKernelProducer.inputFor<TileSync>(waitKernelConsumer), intermediate.data,
                                     output.data);
                        CUSYNC_CUDA_CHECK(cudaEventRecord(join, sideStream));
                        CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(s, join, 0));
                      }});
  auto cusyncPdlPair = [&](Stage& producerStage, Stage& consumerStage) {
    return [&, producer = &producerStage, consumer = &consumerStage](cudaStream_t s) {
      launchKernel(cusyncProducerCopy, grid, block, 0, s, LaunchOrdering::StreamOrder, producer->view(), input.data,
                   intermediate.data);
      launchKernel(cusyncConsumerCopy, grid, block, 0, s, LaunchOrdering::Programmatic, consumer->view(),
                   producer->inputFor<TileSync>(*consumer), intermediate.data, output.data);
    };
  };
  variants.push_back({"cusync + PDL", cusyncPdlPair(pdlProducer, pdlConsumer)});
  variants.push_back({"cusync + PDL + hw order", cusyncPdlPair(hardwareProducer, hardwareConsumer)});
  variants.push_back({"PDL + grid sync", [&](cudaStream_t s) {
                        launchKernel(gridSyncProducerCopy, grid, block, 0, s, LaunchOrdering::StreamOrder, input.data,
                                     intermediate.data);
                        launchKernel(gridSyncConsumerCopy, grid, block, 0, s, LaunchOrdering::Programmatic, intermediate.data,
                                     output.data);
                      }});

  std::vector<std::unique_ptr<Graph>> graphs;
  for (const Variant& variant : variants)
    graphs.push_back(std::make_unique<Graph>(stream, variant.enqueuePair, options.pairsPerGraph));

  std::mt19937 random(std::random_device{}());
  // One measured run: fresh random input, poisoned intermediate and output, the graph, then the output check.
  auto measure = [&](std::size_t v) {
    CUSYNC_CUDA_CHECK(cudaMemsetAsync(intermediate.data, 0xFF, bytesPerKernel, stream));
    CUSYNC_CUDA_CHECK(cudaMemsetAsync(output.data, 0xFF, bytesPerKernel, stream));
    fillRandom<<<4 * properties.multiProcessorCount, 256, 0, stream>>>(input.data, vectors, random());
    CUSYNC_CUDA_CHECK(cudaEventRecord(start, stream));
    CUSYNC_CUDA_CHECK(cudaGraphLaunch(graphs[v]->exec, stream));
    CUSYNC_CUDA_CHECK(cudaEventRecord(stop, stream));
    CUSYNC_CUDA_CHECK(cudaMemsetAsync(differences.data, 0, sizeof(unsigned long long), stream));
    countDifferences<<<4 * properties.multiProcessorCount, 256, 0, stream>>>(input.data, output.data, vectors,
                                                                             differences.data);
    CUSYNC_CUDA_CHECK(cudaGetLastError());
    CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
    float ms = 0;
    CUSYNC_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    unsigned long long wrong = 0;
    CUSYNC_CUDA_CHECK(cudaMemcpy(&wrong, differences.data, sizeof wrong, cudaMemcpyDeviceToHost));
    variants[v].wrongWords += wrong;
    return 1e3 * double(ms) / options.pairsPerGraph;
  };
  for (int round = 0; round < options.warmup; ++round)
    for (std::size_t v = 0; v < variants.size(); ++v) measure(v);
  // Rounds interleave the variants (in a rotating order) so that clock and thermal drift spread over all of them.
  for (int round = 0; round < options.repeats; ++round)
    for (std::size_t i = 0; i < variants.size(); ++i) {
      const std::size_t v = (i + round) % variants.size();
      variants[v].microsecondsPerPair.push_back(measure(v));
    }

  const double bandwidth = measureCopyBandwidth(stream);
  const double floorMicroseconds = 2.0 * 2.0 * double(bytesPerKernel) / bandwidth * 1e6;
  const double streamMedian = median(variants[0].microsecondsPerPair);

  std::printf("device: %s, %d SMs; wave: %d blocks/SM of %d threads; %u blocks x %zu KB = %.1f MB per kernel\n",
              properties.name, properties.multiProcessorCount, blocksPerSm, kThreads, blocks, kBytesPerBlock / 1024,
              double(bytesPerKernel) / 1e6);
  std::printf("%d pairs per graph, %d warm-up rounds, median of %d repeats; copy bandwidth %.0f GB/s (read + write)\n",
              options.pairsPerGraph, options.warmup, options.repeats, bandwidth / 1e9);
  std::printf("floor: 2 kernels x (read + write) x %.1f MB / copy bandwidth = %.2f us per pair\n\n",
              double(bytesPerKernel) / 1e6, floorMicroseconds);

  std::ofstream csv;
  if (!options.csvPath.empty()) {
    csv.open(options.csvPath);
    if (!csv) throw std::runtime_error("cannot write " + options.csvPath);
    csv << "variant,blocks,bytes_per_block,pairs_per_graph,repeats,us_per_pair_median,us_per_pair_min,"
           "ratio_to_stream,wrong_words\n";
  }
  bool allCorrect = true;
  std::printf("%-24s %14s %14s %10s %12s\n", "variant", "us/pair (med)", "us/pair (min)", "vs stream", "wrong words");
  for (const Variant& variant : variants) {
    const double med = median(variant.microsecondsPerPair);
    const double best = *std::min_element(variant.microsecondsPerPair.begin(), variant.microsecondsPerPair.end());
    std::printf("%-24s %14.2f %14.2f %10.3f %12llu\n", variant.name.c_str(), med, best, med / streamMedian,
                variant.wrongWords);
    if (csv) {
      csv << '"' << variant.name << "\"," << blocks << ',' << kBytesPerBlock << ',' << options.pairsPerGraph << ','
          << options.repeats << ',' << med << ',' << best << ',' << med / streamMedian << ',' << variant.wrongWords
          << '\n';
    }
    allCorrect = allCorrect && variant.wrongWords == 0;
  }
  std::printf("%-24s %14.2f %14s %10.3f %12s\n", "floor (bytes/bandwidth)", floorMicroseconds, "", 
              floorMicroseconds / streamMedian, "");
  if (csv)
    csv << "\"floor (bytes/bandwidth)\"," << blocks << ',' << kBytesPerBlock << ",,," << floorMicroseconds << ",,"
        << floorMicroseconds / streamMedian << ",\n";

  graphs.clear();
  cudaEventDestroy(fork);
  cudaEventDestroy(join);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  cudaStreamDestroy(sideStream);
  if (!allCorrect) {
    std::fprintf(stderr, "overhead_bench: a variant's output differed from its input (see 'wrong words')\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parseOptions(argc, argv);
    if (missingCudaDevice(stdout, "overhead_bench: SKIPPED (no usable CUDA device)")) return kNoCudaDevice;
    return run(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "overhead_bench: %s\n", error.what());
    return 1;
  }
}
