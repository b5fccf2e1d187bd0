// How fast can one token's GEMV (y = W x, W [n, k] fp16 row-major, fp32 sums) stream its weights on this GPU, and
// which shape of kernel gets there? A probe for the skinny chain's M = 1 path (runtime/include/cusync/
// skinny_chain_kernel.cuh), standalone: no queue, no synchronization, every block one (row block, k-part) unit,
// split parts summed by atomics into a zeroed fp32 y. Each variant is checked against a float reference and timed
// with CUDA graphs beside a one-pass read of the same weights (the floor).
//
//   nvcc -O3 -std=c++17 -arch=sm_90a -o gemv_probe bench/mlp/gemv_probe.cu && ./gemv_probe   (or the CMake target)
//
// Variants: R rows per warp, U 16-byte loads per row in flight per lane, 8 warps per block, B blocks per SM (launch
// bounds), P k-parts; then the same kernel with the skinny chain's per-unit costs added one at a time (gemvChained).
// Results of 2026-11-26 (H100, session 8 calls 10-11) are in docs/BENCHMARKS.md.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "probe_data.cuh"

#define CHECK(x)                                                                           \
  do {                                                                                     \
    cudaError_t e = (x);                                                                   \
    if (e != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e));      \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

constexpr int kWarps = 8;
bool anyWrong = false;  // any variant off the reference: the exit status says so

__device__ __forceinline__ float dot8(float acc, uint4 w, uint4 x) {
  const __half2* wh = reinterpret_cast<const __half2*>(&w);
  const __half2* xh = reinterpret_cast<const __half2*>(&x);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float2 wf = __half22float2(wh[j]), xf = __half22float2(xh[j]);
    acc = fmaf(wf.x, xf.x, fmaf(wf.y, xf.y, acc));
  }
  return acc;
}

// A warp's R rows over one k-range: 16 bytes of a row per lane, U loads per row in flight; x from shared memory
// (xs, the k-range's activations). Returns the warp's sums in lane 0 of `sums` (R floats from `first`).
template <int R, int U>
__device__ void streamRows(const __half* w, const uint4* xs, int k, int kBegin, int kLen, int row0, float* sums) {
  const int lane = threadIdx.x % 32;
  const __half* base = w + std::size_t(row0) * k + kBegin + 8 * lane;
  float acc[R] = {};
  const int steps = kLen / 256;
  int s = 0;
  for (; s + U <= steps; s += U) {
    uint4 v[U][R];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int r = 0; r < R; ++r) v[u][r] = __ldcs(reinterpret_cast<const uint4*>(base + std::size_t(r) * k + (s + u) * 256));
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint4 xv = xs[(s + u) * 32 + lane];
#pragma unroll
      for (int r = 0; r < R; ++r) acc[r] = dot8(acc[r], v[u][r], xv);
    }
  }
  for (; s < steps; ++s) {
    const uint4 xv = xs[s * 32 + lane];
#pragma unroll
    for (int r = 0; r < R; ++r)
      acc[r] = dot8(acc[r], __ldcs(reinterpret_cast<const uint4*>(base + std::size_t(r) * k + s * 256)), xv);
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float v = acc[r];
#pragma unroll
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) sums[r] = v;
  }
}

// Block: kWarps * R rows; part p of P over k. x's slice staged in shared memory.
template <int R, int U, int B>
__global__ void __launch_bounds__(kWarps * 32, B) gemv(const __half* w, const __half* x, float* y, int n, int k,
                                                       int parts) {
  extern __shared__ uint4 xs[];
  __shared__ float sums[kWarps * R];
  const int rowBlock = blockIdx.x / parts, part = blockIdx.x % parts;
  const int kLen = k / parts, kBegin = part * kLen;
  for (int i = threadIdx.x; i < kLen / 8; i += blockDim.x) xs[i] = reinterpret_cast<const uint4*>(x + kBegin)[i];
  __syncthreads();
  const int warp = threadIdx.x / 32;
  streamRows<R, U>(w, xs, k, kBegin, kLen, rowBlock * kWarps * R + warp * R, sums + warp * R);
  __syncthreads();
  if (threadIdx.x < kWarps * R) atomicAdd(y + rowBlock * kWarps * R + threadIdx.x, sums[threadIdx.x]);
}

// The same GEMV with what the skinny chain adds per unit, to price each: kArrive, the split-K last arrival (an
// arrival counter per row block; the last part reads the fp32 sums back, applies GELU, writes fp16 and zeroes the
// sums); kPersistent, a persistent grid drawing units from one atomic ticket counter (drawn one ahead).
template <int R, int U, int B, bool kArrive, bool kPersistent>
__global__ void __launch_bounds__(kWarps * 32, B)
    gemvChained(const __half* w, const __half* x, float* y, __half* out, unsigned* arrivals,
                unsigned long long* tickets, int n, int k, int parts, int units) {
  extern __shared__ uint4 xs[];
  __shared__ float sums[kWarps * R];
  __shared__ bool last;
  __shared__ unsigned long long shared;
  const int warp = threadIdx.x / 32;
  unsigned long long ticket = blockIdx.x;
  if (kPersistent) {
    if (threadIdx.x == 0) shared = atomicAdd(tickets, 1ull);
    __syncthreads();
    ticket = shared;
  }
  for (;;) {
    const int unit = int(ticket % (unsigned long long)(units + (kPersistent ? gridDim.x : 0)));
    if (unit >= units) break;
    unsigned long long next = 0;
    if (kPersistent && threadIdx.x == 0) next = atomicAdd(tickets, 1ull);
    const int rowBlock = unit / parts, part = unit % parts;
    const int kLen = k / parts, kBegin = part * kLen;
    __syncthreads();
    for (int i = threadIdx.x; i < kLen / 8; i += blockDim.x) xs[i] = reinterpret_cast<const uint4*>(x + kBegin)[i];
    __syncthreads();
    streamRows<R, U>(w, xs, k, kBegin, kLen, rowBlock * kWarps * R + warp * R, sums + warp * R);
    __syncthreads();
    const int rows = kWarps * R, first = rowBlock * rows;
    if (!kArrive) {
      if (threadIdx.x < rows) atomicAdd(y + first + threadIdx.x, sums[threadIdx.x]);
    } else {
      if (threadIdx.x < rows) atomicAdd(y + first + threadIdx.x, sums[threadIdx.x]);
      __syncthreads();
      if (threadIdx.x == 0) {
        __threadfence();
        last = (atomicAdd(arrivals + rowBlock, 1u) + 1u) % unsigned(parts) == 0u;
        __threadfence();
      }
      __syncthreads();
      if (last && threadIdx.x < rows) {
        const float v = __ldcg(y + first + threadIdx.x);
        __stcg(y + first + threadIdx.x, 0.0f);
        out[first + threadIdx.x] = __float2half(0.5f * v * (1.0f + erff(v * 0.70710678f)));
      }
    }
    if (!kPersistent) break;
    __syncthreads();
    if (threadIdx.x == 0) shared = next;
    __syncthreads();
    ticket = shared;
  }
}

// Row-contiguous shape (session 26): a block owns R whole rows and its 256 threads read each row's k in 4 KB
// contiguous pieces (thread t: k = 2048 j + 8 t), U pieces per row in flight; x straight from L1/L2 (every block
// reads the same token), no shared-memory staging and no barrier before the first load; each row summed across the
// block once at the end and stored (no atomics, no zeroed y). Why: the register GEMV above reads 512-byte pieces of
// 4 rows per warp, and torch.compile max-autotune's Triton reduction (a program per few whole rows) streamed LLaMA's
// W1 at the one-pass read's rate on the H200 (session 6, call 11: 21.5 us).
template <int R, int U, int B>
__global__ void __launch_bounds__(256, B) gemvRowContiguous(const __half* w, const __half* x, float* y, int n, int k) {
  constexpr int kPiece = 256 * 8;  // k per block-wide load of a row
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const __half* base = w + std::size_t(blockIdx.x) * R * k + 8 * t;
  const int pieces = k / kPiece;  // whole pieces; a short tail follows
  float acc[R] = {};
  int j = 0;
  for (; j + U <= pieces; j += U) {
    uint4 v[U][R];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int r = 0; r < R; ++r) v[u][r] = __ldcs(reinterpret_cast<const uint4*>(base + std::size_t(r) * k + (j + u) * kPiece));
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint4 xv = __ldg(reinterpret_cast<const uint4*>(x + (j + u) * kPiece + 8 * t));
#pragma unroll
      for (int r = 0; r < R; ++r) acc[r] = dot8(acc[r], v[u][r], xv);
    }
  }
  for (; j * kPiece + 8 * t < k; ++j) {  // the rest of k: whole pieces past the unroll, then the short tail
    const uint4 xv = __ldg(reinterpret_cast<const uint4*>(x + j * kPiece + 8 * t));
#pragma unroll
    for (int r = 0; r < R; ++r)
      acc[r] = dot8(acc[r], __ldcs(reinterpret_cast<const uint4*>(base + std::size_t(r) * k + j * kPiece)), xv);
  }
  __shared__ float partial[R][8];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float v = acc[r];
#pragma unroll
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) partial[r][warp] = v;
  }
  __syncthreads();
  if (t < R) {
    float v = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) v += partial[t][i];
    y[std::size_t(blockIdx.x) * R + t] = v;
  }
}

// The row-contiguous shape for T tokens (session 26): the same loads, each weight piece multiplied by every token's
// piece of x (T x [k] row-major, from L1/L2). kHalfMath: each 8-product partial sum in half2 arithmetic, then added in
// fp32 (about half the instructions of converting every product to fp32, which at T = 8 would take about two thirds of
// the SM's issue rate at the read bandwidth); else every product in fp32 (dot8). y is T x [n].
template <int R, int U, int B, int T, bool kHalfMath>
__global__ void __launch_bounds__(256, B)
    gemvRowTokens(const __half* w, const __half* x, float* y, int n, int k) {
  constexpr int kPiece = 256 * 8;
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const __half* base = w + std::size_t(blockIdx.x) * R * k + 8 * t;
  const int pieces = (k + kPiece - 1) / kPiece;
  float acc[R][T] = {};
  for (int j = 0; j < pieces; j += U) {
    uint4 v[U][R];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const bool inside = (j + u) * kPiece + 8 * t < k;
#pragma unroll
      for (int r = 0; r < R; ++r)
        v[u][r] = inside ? __ldcs(reinterpret_cast<const uint4*>(base + std::size_t(r) * k + (j + u) * kPiece)) : uint4{};
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int kk = (j + u) * kPiece + 8 * t;
#pragma unroll
      for (int tok = 0; tok < T; ++tok) {
        const uint4 xv = kk < k ? __ldg(reinterpret_cast<const uint4*>(x + std::size_t(tok) * k + kk)) : uint4{};
#pragma unroll
        for (int r = 0; r < R; ++r) {
          if constexpr (kHalfMath) {
            const __half2* wh = reinterpret_cast<const __half2*>(&v[u][r]);
            const __half2* xh = reinterpret_cast<const __half2*>(&xv);
            __half2 p = __hmul2(wh[0], xh[0]);
            p = __hfma2(wh[1], xh[1], p);
            p = __hfma2(wh[2], xh[2], p);
            p = __hfma2(wh[3], xh[3], p);
            const float2 pf = __half22float2(p);
            acc[r][tok] += pf.x + pf.y;
          } else {
            acc[r][tok] = dot8(acc[r][tok], v[u][r], xv);
          }
        }
      }
    }
  }
  __shared__ float partial[R][T][8];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int tok = 0; tok < T; ++tok) {
      float v = acc[r][tok];
#pragma unroll
      for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane == 0) partial[r][tok][warp] = v;
    }
  __syncthreads();
  if (t < R * T) {
    const int r = t / T, tok = t % T;
    float v = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) v += partial[r][tok][i];
    y[std::size_t(tok) * n + std::size_t(blockIdx.x) * R + r] = v;
  }
}

__global__ void readOnce(const uint4* data, std::size_t count, unsigned* sink) {
  unsigned f = 0;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < count; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = __ldcs(data + i + j * stride);
#pragma unroll
    for (int j = 0; j < 4; ++j) f ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  for (; i < count; i += stride) f ^= __ldcs(data + i).x;
  if (f == 0x12345678u) sink[0] = f;
}

template <class Launch>
float timeGraph(Launch launch, cudaStream_t stream) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 10; ++i) launch(stream);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int rep = 0; rep < 9; ++rep) {
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaEventRecord(a, stream));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaEventRecord(b, stream));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.f / 10);
  }
  std::sort(t.begin(), t.end());
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return t[t.size() / 2];
}

struct Shape {
  const char* name;
  int n, k;
};

// How far `count` device floats y lie from the reference yRef: the largest |y - yRef| (infinite where y is not
// finite: a poisoned row left unwritten) and the largest |yRef|.
struct Deviation {
  double error = 0, norm = 0;
};
Deviation deviationFromReference(const float* y, const float* yRef, std::size_t count) {
  std::vector<float> got(count), want(count);
  CHECK(cudaMemcpy(got.data(), y, count * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(want.data(), yRef, count * 4, cudaMemcpyDeviceToHost));
  Deviation d;
  for (std::size_t i = 0; i < count; ++i) {
    d.error = std::isfinite(got[i]) ? std::max(d.error, double(std::abs(got[i] - want[i]))) : INFINITY;
    d.norm = std::max(d.norm, double(std::abs(want[i])));
  }
  return d;
}

template <int R, int U, int B>
void run(const Shape& s, const __half* w, const __half* x, float* y, const float* yRef, float readUs, cudaStream_t st) {
  auto kernel = gemv<R, U, B>;
  const int rowsPerBlock = kWarps * R;
  if (s.n % rowsPerBlock) return;
  for (int parts : {1, 2, 4, 8}) {
    if ((s.k / parts) % 256) continue;
    const int smem = (s.k / parts) * 2;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const int blocks = (s.n / rowsPerBlock) * parts;
    int perSm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kWarps * 32, smem));
    auto launch = [&](cudaStream_t stream) {
      CHECK(cudaMemsetAsync(y, 0, s.n * sizeof(float), stream));
      kernel<<<blocks, kWarps * 32, smem, stream>>>(w, x, y, s.n, s.k, parts);
    };
    launch(st);
    CHECK(cudaStreamSynchronize(st));
    const Deviation d = deviationFromReference(y, yRef, s.n);
    const bool ok = d.error <= 1e-3 * d.norm + 1e-5;
    const float us = timeGraph(launch, st);
    const double tbs = double(s.n) * s.k * 2 / (us * 1e-6) / 1e12;
    std::printf("%-6s R=%d U=%d B=%d P=%d blocks=%5d perSM=%d  %7.1f us  %5.2f TB/s  read/this %.3f  %s\n", s.name, R, U,
                B, parts, blocks, perSm, us, tbs, readUs / us, ok ? "ok" : "WRONG");
    anyWrong = anyWrong || !ok;
  }
}

template <int R, int U, int B>
void runRowContiguous(const Shape& s, const __half* w, const __half* x, float* y, const float* yRef, float readUs,
                      cudaStream_t st) {
  if (s.n % R || s.k % 8) return;
  auto kernel = gemvRowContiguous<R, U, B>;
  int perSm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, 256, 0));
  const int blocks = s.n / R;
  CHECK(cudaMemset(y, 0xff, s.n * 4));  // poisoned: every row must be written
  auto launch = [&](cudaStream_t stream) { kernel<<<blocks, 256, 0, stream>>>(w, x, y, s.n, s.k); };
  launch(st);
  CHECK(cudaStreamSynchronize(st));
  const Deviation d = deviationFromReference(y, yRef, s.n);
  const float us = timeGraph(launch, st);
  const bool ok = d.error <= 1e-3 * d.norm + 1e-5;
  anyWrong = anyWrong || !ok;
  std::printf("%-6s row-contiguous R=%d U=%d B=%d blocks=%5d perSM=%d  %7.1f us  %5.2f TB/s  read/this %.3f  %s\n",
              s.name, R, U, B, blocks, perSm, us, double(s.n) * s.k * 2 / (us * 1e-6) / 1e12, readUs / us,
              ok ? "ok" : "WRONG");
}

// T tokens: x holds T token rows, yRef T reference rows (probeReference); the relative bound is looser with
// half-precision partial sums.
template <int R, int U, int B, int T, bool kHalfMath>
void runRowTokens(const Shape& s, const __half* w, const __half* x, float* y, const float* yRef, float readUs,
                  cudaStream_t st) {
  if (s.n % R || s.k % 8) return;
  auto kernel = gemvRowTokens<R, U, B, T, kHalfMath>;
  int perSm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, 256, 0));
  CHECK(cudaMemset(y, 0xff, std::size_t(T) * s.n * 4));
  auto launch = [&](cudaStream_t stream) { kernel<<<s.n / R, 256, 0, stream>>>(w, x, y, s.n, s.k); };
  launch(st);
  CHECK(cudaStreamSynchronize(st));
  const Deviation d = deviationFromReference(y, yRef, std::size_t(T) * s.n);
  const float us = timeGraph(launch, st);
  const bool ok = d.error <= (kHalfMath ? 1e-2 : 1e-3) * d.norm + 1e-5;
  anyWrong = anyWrong || !ok;
  std::printf("%-6s row-contiguous T=%d %s R=%d U=%d B=%d perSM=%d  %7.1f us  %5.2f TB/s  read/this %.3f  max err %.2g "
              "of %.2g %s\n", s.name, T, kHalfMath ? "half2-partials" : "fp32", R, U, B, perSm, us,
              double(s.n) * s.k * 2 / (us * 1e-6) / 1e12, readUs / us, d.error, d.norm, ok ? "ok" : "WRONG");
}

// The multi-token shapes over one weight matrix (x: 8 token rows, yRef: their references).
void runRowTokenShapes(const Shape& s, const __half* w, const __half* x, float* y, const float* yRef, float readUs,
                       cudaStream_t st) {
  runRowTokens<4, 2, 4, 2, false>(s, w, x, y, yRef, readUs, st);
  runRowTokens<2, 2, 4, 4, false>(s, w, x, y, yRef, readUs, st);
  runRowTokens<4, 2, 3, 4, false>(s, w, x, y, yRef, readUs, st);
  runRowTokens<4, 2, 3, 4, true>(s, w, x, y, yRef, readUs, st);
  runRowTokens<2, 2, 3, 8, false>(s, w, x, y, yRef, readUs, st);
  runRowTokens<2, 2, 4, 8, true>(s, w, x, y, yRef, readUs, st);
  runRowTokens<4, 2, 2, 8, true>(s, w, x, y, yRef, readUs, st);
  runRowTokens<4, 1, 3, 8, true>(s, w, x, y, yRef, readUs, st);
}

template <int R, int U, int B, bool kArrive, bool kPersistent>
void runChained(const Shape& s, const __half* w, const __half* x, float* y, const float* yRef, __half* out,
                unsigned* arrivals, unsigned long long* tickets, float readUs, cudaStream_t st) {
  auto kernel = gemvChained<R, U, B, kArrive, kPersistent>;
  const int rowsPerBlock = kWarps * R;
  for (int parts : {1, 4, 8}) {
    if ((s.k / parts) % 256) continue;
    const int smem = (s.k / parts) * 2;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const int units = (s.n / rowsPerBlock) * parts;
    int perSm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kWarps * 32, smem));
    const int blocks = kPersistent ? std::min(units, 132 * perSm) : units;
    // Counters start at zero per configuration: the ticket and arrival arithmetic is modulo this one's counts.
    CHECK(cudaMemset(tickets, 0, 8));
    CHECK(cudaMemset(arrivals, 0, s.n * 4));
    CHECK(cudaMemset(y, 0, s.n * 4));
    auto launch = [&](cudaStream_t stream) {
      if (!kArrive) CHECK(cudaMemsetAsync(y, 0, s.n * sizeof(float), stream));
      kernel<<<blocks, kWarps * 32, smem, stream>>>(w, x, y, out, arrivals, tickets, s.n, s.k, parts, units);
    };
    const float us = timeGraph(launch, st);
    // Checked after the timed replays: y (fp32 sums) without the arrival, GELU(y) in fp16 with it.
    std::vector<float> want(s.n), got(s.n);
    CHECK(cudaMemcpy(want.data(), yRef, s.n * 4, cudaMemcpyDeviceToHost));
    if (kArrive) {
      std::vector<__half> half(s.n);
      CHECK(cudaMemcpy(half.data(), out, s.n * 2, cudaMemcpyDeviceToHost));
      for (int i = 0; i < s.n; ++i) {
        got[i] = __half2float(half[i]);
        want[i] = 0.5f * want[i] * (1.0f + std::erf(want[i] * 0.70710678f));
      }
    } else {
      CHECK(cudaMemcpy(got.data(), y, s.n * 4, cudaMemcpyDeviceToHost));
    }
    double err = 0, norm = 0;
    for (int i = 0; i < s.n; ++i) {
      err = std::max(err, double(std::abs(got[i] - want[i])));
      norm = std::max(norm, double(std::abs(want[i])));
    }
    const bool ok = err <= 2e-3 * norm + 1e-4;
    anyWrong = anyWrong || !ok;
    std::printf("%-6s chained R=%d U=%d B=%d arrive=%d persistent=%d P=%d blocks=%5d  %7.1f us  %5.2f TB/s  read/this %.3f\n",
                s.name, R, U, B, int(kArrive), int(kPersistent), parts, blocks, us,
                double(s.n) * s.k * 2 / (us * 1e-6) / 1e12, readUs / us);
    if (!ok) std::printf("  WRONG: max error %.3g against %.3g\n", err, norm);
  }
}

// The register GEMV's shapes and the chain's per-unit costs added to it (sessions 8 and 25).
void runRegisterShapes(const Shape& s, const __half* w, const __half* x, float* y, const float* yRef, float readUs,
                       cudaStream_t st) {
    run<4, 2, 4>(s, w, x, y, yRef, readUs, st);
    run<1, 4, 6>(s, w, x, y, yRef, readUs, st);
    // More bytes in flight per SM, for HBM3e's larger bandwidth-latency product (H200, session 25): the chain's 4-row
    // warps with deeper unrolls at fewer blocks per SM (registers bound U x B).
    run<4, 2, 3>(s, w, x, y, yRef, readUs, st);
    run<4, 3, 3>(s, w, x, y, yRef, readUs, st);
    run<4, 4, 2>(s, w, x, y, yRef, readUs, st);
    run<4, 4, 3>(s, w, x, y, yRef, readUs, st);
    __half* out;
    unsigned* arrivals;
    unsigned long long* tickets;
    CHECK(cudaMalloc(&out, s.n * 2));
    CHECK(cudaMalloc(&arrivals, s.n * 4));
    CHECK(cudaMalloc(&tickets, 8));
    CHECK(cudaMemset(arrivals, 0, s.n * 4));
    CHECK(cudaMemset(tickets, 0, 8));
    CHECK(cudaMemset(y, 0, s.n * 4));
    runChained<4, 2, 4, false, false>(s, w, x, y, yRef, out, arrivals, tickets, readUs, st);
    runChained<4, 2, 4, true, false>(s, w, x, y, yRef, out, arrivals, tickets, readUs, st);
    runChained<4, 2, 4, false, true>(s, w, x, y, yRef, out, arrivals, tickets, readUs, st);
    runChained<4, 2, 4, true, true>(s, w, x, y, yRef, out, arrivals, tickets, readUs, st);
    CHECK(cudaFree(out));
    CHECK(cudaFree(arrivals));
    CHECK(cudaFree(tickets));
}

int main() {
  cudaStream_t st;
  CHECK(cudaStreamCreate(&st));
  const Shape shapes[] = {{"gpt3.1", 6144, 12288}, {"gpt3.2", 12288, 6144}, {"llama.1", 5504, 8192},
                          {"llama.2", 8192, 2752}};
  for (const Shape& s : shapes) {
    __half *w, *x;
    float *y, *yRef;
    CHECK(cudaMalloc(&w, std::size_t(s.n) * s.k * 2));
    CHECK(cudaMalloc(&x, std::size_t(8) * s.k * 2));
    CHECK(cudaMalloc(&y, std::size_t(8) * s.n * 4));
    CHECK(cudaMalloc(&yRef, std::size_t(8) * s.n * 4));
    probeFill<<<1024, 256, 0, st>>>(w, std::size_t(s.n) * s.k, 1);
    // x and yRef hold 8 token rows: the one-token shapes use the first, the multi-token ones all.
    probeFill<<<16, 256, 0, st>>>(x, std::size_t(8) * s.k, 2);
    probeReference<<<s.n, 256, 0, st>>>(w, x, yRef, s.n, s.k, 8);
    unsigned* sink;
    CHECK(cudaMalloc(&sink, 4));
    const std::size_t vectors = std::size_t(s.n) * s.k / 8;
    const float readUs = timeGraph(
        [&](cudaStream_t stream) { readOnce<<<132 * 4, 512, 0, stream>>>(reinterpret_cast<const uint4*>(w), vectors, sink); }, st);
    std::printf("%-6s one-pass read of the weights: %.1f us, %.2f TB/s\n", s.name, readUs,
                double(s.n) * s.k * 2 / (readUs * 1e-6) / 1e12);
    // What the zeroing of y costs each P = 1 launch below (a memset node in the same graph).
    std::printf("%-6s memset of y alone: %.1f us\n", s.name,
                timeGraph([&](cudaStream_t stream) { CHECK(cudaMemsetAsync(y, 0, s.n * sizeof(float), stream)); }, st));
    // R x U x 16 bytes in flight per thread within the registers B blocks of 256 threads leave (no spills).
    runRowContiguous<1, 4, 8>(s, w, x, y, yRef, readUs, st);
    runRowContiguous<2, 2, 8>(s, w, x, y, yRef, readUs, st);
    runRowContiguous<1, 6, 6>(s, w, x, y, yRef, readUs, st);
    runRowContiguous<2, 3, 6>(s, w, x, y, yRef, readUs, st);
    runRowContiguous<4, 2, 4>(s, w, x, y, yRef, readUs, st);
    runRowContiguous<2, 4, 4>(s, w, x, y, yRef, readUs, st);
    runRowContiguous<1, 8, 4>(s, w, x, y, yRef, readUs, st);
    runRowContiguous<8, 2, 3>(s, w, x, y, yRef, readUs, st);
    runRowContiguous<4, 4, 3>(s, w, x, y, yRef, readUs, st);
    runRowContiguous<2, 8, 3>(s, w, x, y, yRef, readUs, st);
    runRowTokenShapes(s, w, x, y, yRef, readUs, st);
    if (std::getenv("GEMV_PROBE_ROW_CONTIGUOUS_ONLY") == nullptr) runRegisterShapes(s, w, x, y, yRef, readUs, st);
    CHECK(cudaFree(w));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(yRef));
    CHECK(cudaFree(sink));
  }
  return anyWrong ? 1 : 0;
}
