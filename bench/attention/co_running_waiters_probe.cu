// Do blocks that only wait slow blocks on other SMs? Session 34's block traces of GPT-3's prompt chain at 512 tokens
// (docs/BENCHMARKS.md, issue 14) found CUTLASS's flash attention 48 blocks taking 8-14 us stream-ordered, but
// 15-26 us once the output GEMM's blocks ran on the other 84 SMs, under tile sync (their producer warps poll
// semaphores) and under PDL grid sync alike (they wait in griddepcontrol.wait, polling nothing). The traces put the
// two kernels' blocks on different SMs, and one carveout for both changed nothing. Written then and first run in
// session 35 (docs/BENCHMARKS.md, issue 14). This probe isolates the effect from both kernels: a work
// kernel of 48 blocks (one per SM: 160 KB of shared memory each) runs alone, then beside 84 "waiter" blocks (also one
// per SM, so never on a work block's SM) that wait until the work ends in one of several ways:
//   idle:      thread 0 polls a flag in global memory every 50 us; the other warps sit in __syncthreads. The
//              baseline of the waiting modes: the work blocks get the same 48 SMs left over, so a difference from
//              "alone" that idle shows too is placement, not waiting;
//   barrier:   the same, polling every 2 us (a producer warp's one-thread poll with backoff);
//   hot-poll:  thread 0 polls with no sleep (a one-thread semaphore poll without backoff);
//   mbarrier:  every warp but thread 0's spins in mbarrier.try_wait on a barrier thread 0 completes once it has
//              seen the flag (every 2 us), as a CUTLASS math warp group waits for its first stage;
//   all-poll:  every thread polls the flag with no sleep (worst case).
// In those modes the waiters are resident first and the work takes the SMs they leave. Two more modes launch the
// waiters after the work, as the prompt chain's output GEMM comes after the attention (session 35: the modes above
// slowed nothing, so what is left is the launch order and PDL's own wait):
//   late-idle: launched on another stream right after the work's launch, waiting as idle does (the host enqueues the
//              work first; which kernel the hardware starts first is not recorded);
//   pdl-wait:  launched on the work's stream with programmatic stream serialization (the work triggers its
//              dependents at block start, as cusync's kernels do), every thread in griddepcontrol.wait until the
//              work grid completes: PDL grid sync's output GEMM, exactly.
// The work is either tensor-core bound (mma.sync chains, like the attention's QK^T and PV), L2 bound (every
// block rereads a 2 MB window of a 4 MB buffer), or the same window read by TMA bulk copies into shared memory (as
// the flash attention loads K and V). Reported per mode: the work's span (first start to last end) and
// its blocks' median duration, medians over rounds with the modes interleaved, and how many work blocks share a TPC
// with a waiter or with another work block (taking SMs 2t and 2t+1 as TPC t: an assumption, not documented).
// Waiters give up after 50 ms and the work waits at most 10 ms for them, so a placement the probe did not expect
// cannot hang it; runs where the work did not see every waiter resident are counted and left out.
//
// Usage: co_running_waiters_probe [--rounds N] [--mma-steps N] [--l2-passes N]   (exit 77 without a CUDA device;
// --l2-passes sets both the L2 and the TMA bulk-copy work)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;
constexpr int kWorkBlocks = 48;     // GPT-3's prompt attention tiles at 512 tokens: 12 heads x 4 query tiles
constexpr int kSharedBytes = 160 * 1024;  // one block per SM, and never a work block beside a waiter
constexpr std::uint64_t kWaiterTimeoutNs = 50'000'000;
constexpr std::size_t kL2BufferBytes = 4u << 20;
constexpr std::size_t kL2WindowBytes = 2u << 20;

enum class WaitMode { None, Idle, Barrier, HotPoll, Mbarrier, AllPoll, LateIdle, PdlWait };
constexpr int kModes = 8;
const char* const kWaitModeNames[kModes] = {"alone",    "idle",     "barrier",   "hot-poll",
                                            "mbarrier", "all-poll", "late-idle", "pdl-wait"};
// Modes whose waiters are launched after the work kernel.
constexpr bool launchedAfterWork(WaitMode mode) { return mode == WaitMode::LateIdle || mode == WaitMode::PdlWait; }
constexpr int kTimeFields = 4;  // per work block: start, end, SM, whether it saw every waiter resident
enum class WorkKind { TensorCores, L2Reads, BulkCopies };
constexpr std::uint32_t kBulkChunkBytes = 16 * 1024;  // per cp.async.bulk
constexpr int kBulkChunksInFlight = 8;                 // 128 KB of the block's 160 KB per round trip

struct Shared {
  std::uint32_t stop;      // set by the last work block to finish
  std::uint32_t finished;  // work blocks done
  std::uint32_t waitersResident;
};

__device__ __forceinline__ std::uint64_t globalTimerNs() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ std::uint32_t smId() {
  std::uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}
__device__ __forceinline__ std::uint32_t loadAcquire(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Each warp runs `steps` rounds of four independent mma.sync chains (m16n8k16, fp16 in, fp32 accumulate).
__device__ float tensorCoreWork(int steps) {
  float c[4][4] = {};
  std::uint32_t a[4], b[2];
  const std::uint32_t seed = threadIdx.x * 2654435761u;
  for (int i = 0; i < 4; ++i) a[i] = seed ^ (0x3c003c00u + i);
  b[0] = seed ^ 0x3c003800u;
  b[1] = seed ^ 0x38003c00u;
  for (int s = 0; s < steps; ++s) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%0,%1,%2,%3};"
          : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  float sum = 0.0f;
  for (int j = 0; j < 4; ++j)
    for (int k = 0; k < 4; ++k) sum += c[j][k];
  return sum;
}

// The block rereads its 2 MB window of the buffer `passes` times, 16 bytes per thread per load.
__device__ float l2Work(const uint4* buffer, int passes) {
  const std::size_t windowWords = kL2WindowBytes / sizeof(uint4);
  const std::size_t bufferWords = kL2BufferBytes / sizeof(uint4);
  const std::size_t offset = (std::size_t(blockIdx.x) * 4099 * 16) % bufferWords;
  std::uint32_t x = 0;
  for (int p = 0; p < passes; ++p)
    for (std::size_t i = threadIdx.x; i < windowWords; i += kThreads) {
      const uint4 v = __ldcg(buffer + (offset + i) % bufferWords);
      x ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  return float(x & 1u);
}

// The block reads its 2 MB window `passes` times by TMA bulk copies into shared memory, 128 KB per round trip
// (thread 0 issues and waits; one mbarrier counts the bytes).
__device__ float bulkCopyWork(const uint4* buffer, int passes, std::uint8_t* staging) {
  __shared__ alignas(8) std::uint64_t barrier;
  const std::uint32_t barrierAddress = std::uint32_t(__cvta_generic_to_shared(&barrier));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(barrierAddress) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    const char* base = reinterpret_cast<const char*>(buffer);
    const std::size_t offset = (std::size_t(blockIdx.x) * 4099 * 256) % kL2BufferBytes / kBulkChunkBytes;
    const std::size_t bufferChunks = kL2BufferBytes / kBulkChunkBytes;
    const std::size_t windowChunks = kL2WindowBytes / kBulkChunkBytes;
    std::uint32_t phase = 0;
    for (int p = 0; p < passes; ++p)
      for (std::size_t c = 0; c < windowChunks; c += kBulkChunksInFlight) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrierAddress),
                     "r"(kBulkChunkBytes * kBulkChunksInFlight)
                     : "memory");
        for (int j = 0; j < kBulkChunksInFlight; ++j) {
          const char* source = base + ((offset + c + j) % bufferChunks) * kBulkChunkBytes;
          const std::uint32_t destination =
              std::uint32_t(__cvta_generic_to_shared(staging + std::size_t(j) * kBulkChunkBytes));
          asm volatile(
              "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                  destination),
              "l"(source), "r"(kBulkChunkBytes), "r"(barrierAddress)
              : "memory");
        }
        std::uint32_t done = 0;
        while (!done)
          asm volatile(
              "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
              : "=r"(done)
              : "r"(barrierAddress), "r"(phase)
              : "memory");
        phase ^= 1u;
      }
  }
  __syncthreads();
  return float(staging[threadIdx.x] & 1u);
}

// times: per block {start, end, SM, 1 if every waiter was resident}. Waits (thread 0, 10 ms at most) for the waiters
// it was told to expect, so that they are resident before the work starts.
__global__ void __launch_bounds__(kThreads) workKernel(Shared* shared, std::uint32_t waiters, WorkKind kind,
                                                       int amount, const uint4* buffer, float* sink,
                                                       std::uint64_t* times) {
  extern __shared__ __align__(16) std::uint8_t dynamicShared[];  // the bulk copies' staging: 16-byte aligned
  __shared__ bool allResident;
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");  // a no-op unless a PDL dependent follows
  if (threadIdx.x == 0) {
    const std::uint64_t until = globalTimerNs() + 10'000'000;
    while (loadAcquire(&shared->waitersResident) < waiters && globalTimerNs() < until) {
    }
    allResident = loadAcquire(&shared->waitersResident) >= waiters;
  }
  __syncthreads();
  const std::uint64_t start = globalTimerNs();
  const float result = kind == WorkKind::TensorCores ? tensorCoreWork(amount)
                       : kind == WorkKind::L2Reads   ? l2Work(buffer, amount)
                                                     : bulkCopyWork(buffer, amount, dynamicShared);
  dynamicShared[threadIdx.x] = std::uint8_t(result);  // keeps the work and the shared memory
  __syncthreads();
  if (threadIdx.x == 0) {
    times[kTimeFields * blockIdx.x + 0] = start;
    times[kTimeFields * blockIdx.x + 1] = globalTimerNs();
    times[kTimeFields * blockIdx.x + 2] = smId();
    times[kTimeFields * blockIdx.x + 3] = allResident ? 1 : 0;
    if (dynamicShared[0] == 0xff) sink[blockIdx.x] = result;
    __threadfence();
    if (atomicAdd(&shared->finished, 1u) + 1 == gridDim.x) atomicExch(&shared->stop, 1u);
  }
}

__global__ void __launch_bounds__(kThreads) waiterKernel(Shared* shared, WaitMode mode, std::uint32_t* sms) {
  extern __shared__ __align__(16) std::uint8_t dynamicShared[];
  __shared__ alignas(8) std::uint64_t barrier;
  const std::uint64_t until = globalTimerNs() + kWaiterTimeoutNs;
  if (threadIdx.x == 0) {
    sms[blockIdx.x] = smId();
    const std::uint32_t address = std::uint32_t(__cvta_generic_to_shared(&barrier));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(address) : "memory");
    atomicAdd(&shared->waitersResident, 1u);
  }
  __syncthreads();
  switch (mode) {
    case WaitMode::Idle:
    case WaitMode::LateIdle:
    case WaitMode::Barrier:
      if (threadIdx.x == 0)
        while (loadAcquire(&shared->stop) == 0 && globalTimerNs() < until)
          __nanosleep(mode == WaitMode::Barrier ? 2000 : 50'000);
      __syncthreads();
      break;
    case WaitMode::HotPoll:
      if (threadIdx.x == 0)
        while (loadAcquire(&shared->stop) == 0 && globalTimerNs() < until) {
        }
      __syncthreads();
      break;
    case WaitMode::Mbarrier: {
      const std::uint32_t address = std::uint32_t(__cvta_generic_to_shared(&barrier));
      if (threadIdx.x == 0) {
        while (loadAcquire(&shared->stop) == 0 && globalTimerNs() < until) __nanosleep(2000);
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(address) : "memory");
      } else {
        std::uint32_t done = 0;
        while (!done) {
          asm volatile(
              "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
              : "=r"(done)
              : "r"(address), "r"(0u)
              : "memory");
        }
      }
      break;
    }
    case WaitMode::AllPoll:
      while (loadAcquire(&shared->stop) == 0 && globalTimerNs() < until) {
      }
      break;
    case WaitMode::PdlWait:
      asm volatile("griddepcontrol.wait;" ::: "memory");
      break;
    case WaitMode::None:
      break;
  }
  if (threadIdx.x == 0) dynamicShared[0] = 1;
}

#define CHECK(call)                                                                                     \
  do {                                                                                                  \
    const cudaError_t status_ = (call);                                                                 \
    if (status_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(status_)); \
      std::exit(1);                                                                                     \
    }                                                                                                   \
  } while (0)

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// A whole number in [1, most] or exit 2. The work's amounts are bounded so that it ends well within the waiters'
// 50 ms (about 30 us at the defaults).
int parsePositive(const char* option, const char* text, long most) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > most) {
    std::fprintf(stderr, "co_running_waiters_probe: %s wants a whole number from 1 to %ld, not '%s'\n", option, most,
                 text);
    std::exit(2);
  }
  return int(value);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 15, mmaSteps = 1024, l2Passes = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc || (arg != "--rounds" && arg != "--mma-steps" && arg != "--l2-passes")) {
      std::fprintf(stderr, "Usage: co_running_waiters_probe [--rounds N] [--mma-steps N] [--l2-passes N]\n"
                           "  --l2-passes sets both the L2 and the TMA bulk-copy work\n");
      return 2;
    }
    const long most = arg == "--rounds" ? 1000 : arg == "--mma-steps" ? 32768 : 64;
    const int value = parsePositive(argv[i], argv[i + 1], most);
    ++i;
    if (arg == "--rounds") rounds = value;
    else if (arg == "--mma-steps") mmaSteps = value;
    else l2Passes = value;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp properties{};
  CHECK(cudaGetDeviceProperties(&properties, 0));
  const int waiters = properties.multiProcessorCount - kWorkBlocks;
  if (waiters < 1) {
    std::printf("SKIPPED: %d SMs leave no SM for a waiter beside %d work blocks\n", properties.multiProcessorCount,
                kWorkBlocks);
    return 77;
  }
  std::printf("%s: %d SMs; %d work blocks, %d waiters, one block per SM (%d KB of shared memory each)\n",
              properties.name, properties.multiProcessorCount, kWorkBlocks, waiters, kSharedBytes / 1024);
  CHECK(cudaFuncSetAttribute(workKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  CHECK(cudaFuncSetAttribute(waiterKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));

  Shared* shared = nullptr;
  uint4* buffer = nullptr;
  float* sink = nullptr;
  std::uint64_t* times = nullptr;
  std::uint32_t* waiterSms = nullptr;
  CHECK(cudaMalloc(&shared, sizeof(Shared)));
  CHECK(cudaMalloc(&buffer, kL2BufferBytes));
  CHECK(cudaMemset(buffer, 0x5a, kL2BufferBytes));
  CHECK(cudaMalloc(&sink, kWorkBlocks * sizeof(float)));
  CHECK(cudaMalloc(&times, kTimeFields * kWorkBlocks * sizeof(std::uint64_t)));
  CHECK(cudaMalloc(&waiterSms, waiters * sizeof(std::uint32_t)));
  CHECK(cudaDeviceSynchronize());  // the buffer's memset ran on the legacy stream
  cudaStream_t workStream, waiterStream;
  CHECK(cudaStreamCreateWithFlags(&workStream, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&waiterStream, cudaStreamNonBlocking));
  cudaEvent_t reset;
  CHECK(cudaEventCreateWithFlags(&reset, cudaEventDisableTiming));

  for (WorkKind kind : {WorkKind::TensorCores, WorkKind::L2Reads, WorkKind::BulkCopies}) {
    const int amount = kind == WorkKind::TensorCores ? mmaSteps : l2Passes;
    std::vector<double> spans[kModes], blockMedians[kModes], byWaiter[kModes], byWork[kModes];
    int notResident[kModes] = {}, longRuns = 0;
    for (int round = -1; round < rounds; ++round) {  // round -1 warms up
      for (int m = 0; m < kModes; ++m) {
        const int mode = (m + std::max(round, 0)) % kModes;  // rotated per round
        const std::uint32_t waiting = mode == 0 ? 0u : std::uint32_t(waiters);
        CHECK(cudaMemsetAsync(shared, 0, sizeof(Shared), workStream));
        CHECK(cudaEventRecord(reset, workStream));
        CHECK(cudaStreamWaitEvent(waiterStream, reset, 0));
        const bool late = launchedAfterWork(WaitMode(mode));
        if (waiting > 0 && !late)
          waiterKernel<<<waiting, kThreads, kSharedBytes, waiterStream>>>(shared, WaitMode(mode), waiterSms);
        workKernel<<<kWorkBlocks, kThreads, kSharedBytes, workStream>>>(shared, waiting, kind, amount, buffer, sink,
                                                                        times);
        if (WaitMode(mode) == WaitMode::LateIdle)
          waiterKernel<<<waiting, kThreads, kSharedBytes, waiterStream>>>(shared, WaitMode(mode), waiterSms);
        if (WaitMode(mode) == WaitMode::PdlWait) {
          cudaLaunchConfig_t config{};
          config.gridDim = dim3(waiting);
          config.blockDim = dim3(kThreads);
          config.dynamicSmemBytes = kSharedBytes;
          config.stream = workStream;
          cudaLaunchAttribute attribute{};
          attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
          attribute.val.programmaticStreamSerializationAllowed = 1;
          config.attrs = &attribute;
          config.numAttrs = 1;
          CHECK(cudaLaunchKernelEx(&config, waiterKernel, shared, WaitMode(mode), waiterSms));
        }
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        std::uint64_t host[kTimeFields * kWorkBlocks];
        CHECK(cudaMemcpy(host, times, sizeof(host), cudaMemcpyDeviceToHost));
        std::vector<std::uint32_t> waiterSm(waiting), workSm;
        if (waiting > 0)
          CHECK(cudaMemcpy(waiterSm.data(), waiterSms, waiting * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
        std::uint64_t first = ~0ull, last = 0;
        std::vector<double> durations;
        bool allResident = true;
        for (int b = 0; b < kWorkBlocks; ++b) {
          const std::uint64_t* t = host + kTimeFields * b;
          first = std::min(first, t[0]);
          last = std::max(last, t[1]);
          durations.push_back(double(t[1] - t[0]) / 1000.0);
          workSm.push_back(std::uint32_t(t[2]));
          allResident = allResident && t[3] == 1;
        }
        int nextToWaiter = 0, nextToWork = 0;
        for (std::uint32_t sm : workSm) {
          const std::uint32_t sibling = sm ^ 1u;  // SMs 2t and 2t + 1 taken as TPC t
          nextToWaiter += std::count(waiterSm.begin(), waiterSm.end(), sibling) > 0;
          nextToWork += std::count(workSm.begin(), workSm.end(), sibling) > 0;
        }
        const double span = double(last - first) / 1000.0;
        if (round < 0) continue;
        if (!allResident) {  // the work ran before every waiter was resident: not the case being measured
          ++notResident[mode];
          continue;
        }
        if (span > 25'000.0) ++longRuns;
        spans[mode].push_back(span);
        blockMedians[mode].push_back(median(durations));
        byWaiter[mode].push_back(nextToWaiter);
        byWork[mode].push_back(nextToWork);
      }
    }
    std::printf("\n%s work (%s %d), medians of %d rounds:\n",
                kind == WorkKind::TensorCores ? "tensor-core" : kind == WorkKind::L2Reads ? "L2" : "TMA bulk-copy",
                kind == WorkKind::TensorCores ? "mma steps per warp" : "passes over 2 MB per block", amount, rounds);
    std::printf("  %-9s %9s %9s %9s %9s %14s %14s\n", "waiters", "span us", "block us", "vs alone", "vs idle",
                "TPC w/ waiter", "TPC w/ work");
    for (int mode = 0; mode < kModes; ++mode) {
      if (spans[mode].empty() || spans[0].empty() || spans[1].empty()) {  // every run of the mode left out
        std::printf("  %-9s n/a (no run with every waiter resident)\n", kWaitModeNames[mode]);
        continue;
      }
      std::printf("  %-9s %9.2f %9.2f %9.3f %9.3f %14.0f %14.0f\n", kWaitModeNames[mode], median(spans[mode]),
                  median(blockMedians[mode]), median(spans[mode]) / median(spans[0]),
                  median(spans[mode]) / median(spans[1]), median(byWaiter[mode]), median(byWork[mode]));
    }
    for (int mode = 0; mode < kModes; ++mode)
      if (notResident[mode] > 0)
        std::printf("  (%s: %d runs left out, the work started before every waiter was resident)\n",
                    kWaitModeNames[mode], notResident[mode]);
    if (longRuns > 0)
      std::printf("  (%d runs took over 25 ms: the waiters, 50 ms at most, may have left first; use a smaller "
                  "amount)\n",
                  longRuns);
  }
  std::printf("\nTPC w/ waiter (w/ work): work blocks whose sibling SM (smid ^ 1) held a waiter (a work block); "
              "medians.\n");
  return 0;
}
