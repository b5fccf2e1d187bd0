// Does a few-token GEMV (Y = X W^T, X [m, k] with m <= 8 tokens, W [n, k] fp16 row-major, fp32 sums, fp16 Y) get
// faster when a block's warps share the tokens? A probe for the MLP's whole-rows tensor-core GEMV
// (runtime/include/cusync/row_mma_gemv_products.cuh, configuration gemv_rows_mma_p2), standalone: no queue, no
// synchronization, each variant checked against a float reference (poisoned output first) and timed with CUDA graphs
// beside a one-pass read of the same weights (the floor) and cuBLAS on the same operands.
//
// Why: in the whole-rows kernel each warp multiplies 8 weight rows over its own 256-k share of every 2048-k piece, so
// no two warps read the same token chunk: a block reads the tokens' k once per 8 rows. At m = 8 that is as many bytes
// (from L2) as its weights (from HBM), and the kernel is 1.2x slower at m = 8 than at m = 4 (session 29: GPT-3 MLP
// 94.4 against 78.6 us). Halving the token bytes (16 rows per block, two warps sharing) bought 5% (session 29, call 6).
//
// The variant here ("shared tokens"): the weights are the mma's A operand (16 rows per warp, m16n8k16, tokens as the
// 8 columns of B), so a warp needs no transpose: lane (g, t) loads 16 bytes of rows g and g + 8 at k = 32 s + 8 t and
// feeds two mmas (a fragment may hold any four physical k as long as the token fragment holds the same four; here
// logical k 2t, 2t+1, 2t+8, 2t+9 are physical 8t..8t+3). A block's warps take different rows over the same k-part,
// and the part's tokens are staged in shared memory once per block (every warp reads them with conflict-free 16-byte
// loads): per block, token bytes / weight bytes = m / (16 warps). Blocks cover (row group, k-part); parts > 1 sum
// into fp32 partials with red.add, and the last arriving part writes fp16 Y and zeroes the partials (the skinny
// chain's split-K finish).
//
//   nvcc -O3 -std=c++17 -arch=sm_90a -Iruntime/include -Iexamples -o few_token_gemv_probe \
//        bench/mlp/few_token_gemv_probe.cu -lcublas
//   ./few_token_gemv_probe            (or the CMake target; exit status 1 when any variant is wrong)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/graph_timer.cuh"
#include "probe_data.cuh"
#include "common/read_bandwidth.cuh"  // detail::readOnce: the floor's one-pass read kernel
#include "cusync/tile.h"              // CUSYNC_HOST_DEVICE
#include "cusync/packed_gemv_pack.cuh"
#include "cusync/row_mma_gemv_products.cuh"

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t e = (x);                                                              \
    if (e != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)
#define CHECK_CUBLAS(x)                                                          \
  do {                                                                           \
    cublasStatus_t e = (x);                                                      \
    if (e != CUBLAS_STATUS_SUCCESS) {                                            \
      std::fprintf(stderr, "%s:%d: cuBLAS status %d\n", __FILE__, __LINE__, int(e)); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

bool anyWrong = false;
bool checkOnly = false;  // --check-only: run and check each variant once, no timing (for ncu)

// ---------------------------------------------------------------------------------------------------------------
// The whole-rows kernel as the MLP runs it (gemv_rows_mma_p2), minus the activation: the same loop from the runtime.
template <int kTokens>
__global__ void __launch_bounds__(cusync::kRowMmaGemvThreads, 2)
    wholeRows(const __half* w, const __half* x, __half* y, int n, int k, int m) {
  constexpr int kRows = cusync::kRowMmaGemvRows;
  constexpr int kPiece = cusync::kRowMmaGemvThreads * 8;
  const int tid = threadIdx.x;
  const __half* base = w + std::size_t(blockIdx.x) * kRows * k + 8 * tid;
  extern __shared__ __align__(16) uint4 shared[];
  cusync::detail::rowMmaGemvProducts<1, kTokens>(
      k, m, shared,
      [&](int r, int piece) {
        return reinterpret_cast<const uint4*>(base + std::size_t(r) * k + std::size_t(piece) * kPiece);
      },
      [&](int token, std::size_t offset) {
        return __ldg(reinterpret_cast<const uint4*>(x + std::size_t(token) * k + offset));
      },
      [] {});
  auto* const warpSums = cusync::rowMmaGemvWarpSums<kTokens>(shared);
  __syncthreads();
  const int token = tid / kRows, row = tid % kRows;
  if (token < m) {
    float sum = 0.0f;
#pragma unroll
    for (int warp = 0; warp < cusync::kRowMmaGemvWarps; ++warp) sum += warpSums[warp][token][row];
    y[std::size_t(token) * n + blockIdx.x * kRows + row] = __float2half(sum);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Shared tokens: kWarps warps of 16 rows over one k-part; kUnroll 32-k steps of both rows in flight per lane.
__device__ __forceinline__ void mmaRowsByTokens(float (&d)[4], uint4 rowG, uint4 rowG8, std::uint32_t b0,
                                                std::uint32_t b1, bool high) {
  const std::uint32_t a0 = high ? rowG.z : rowG.x, a1 = high ? rowG8.z : rowG8.x;
  const std::uint32_t a2 = high ? rowG.w : rowG.y, a3 = high ? rowG8.w : rowG8.y;
  cusync::detail::mmaM16N8K16(d, a0, a1, a2, a3, b0, b1);
}

// Token row stride in 16-byte chunks: the part's chunks rounded up to 8, plus 4, so that lanes (g, t) and (g + 1, t)
// of one 8-lane phase of a 16-byte shared load fall 4 chunks apart mod 8 (conflict-free).
__host__ __device__ inline int tokenStride(int chunks) { return (chunks + 7) / 8 * 8 + 4; }

template <int kWarps, int kUnroll>
__global__ void __launch_bounds__(kWarps * 32)
    sharedTokens(const __half* w, const __half* x, __half* y, float* partials, unsigned* arrivals, int n, int k,
                 int m, int parts, int stepsPerPart) {
  constexpr int kRows = 16 * kWarps;
  const int rowGroup = blockIdx.x / parts, part = blockIdx.x % parts;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, g = lane / 4, t = lane % 4;
  const int steps = k / 32;
  const int s0 = part * stepsPerPart, s1 = min(steps, s0 + stepsPerPart);
  const int row = rowGroup * kRows + warp * 16 + g;
  const __half* rowG = w + std::size_t(row) * k + 8 * t;
  const __half* rowG8 = rowG + std::size_t(8) * k;
  uint4 a[kUnroll][2];
  const auto load = [&](int u, int s) {
    a[u][0] = s < s1 ? __ldcs(reinterpret_cast<const uint4*>(rowG + 32 * s)) : uint4{};
    a[u][1] = s < s1 ? __ldcs(reinterpret_cast<const uint4*>(rowG8 + 32 * s)) : uint4{};
  };
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) load(u, s0 + u);
  // The part's tokens, once per block (here a chain's stage would wait for its producer: the weights are in flight).
  extern __shared__ __align__(16) uint4 tokens[];
  const int chunks = (s1 - s0) * 4, stride = tokenStride(chunks);
  for (int i = tid; i < m * chunks; i += kWarps * 32) {
    const int token = i / chunks, c = i % chunks;
    tokens[token * stride + c] =
        __ldg(reinterpret_cast<const uint4*>(x + std::size_t(token) * k + std::size_t(s0) * 32) + c);
  }
  __syncthreads();
  const bool hasToken = g < m;
  const uint4* myTokens = tokens + g * stride + t;
  float acc[4] = {};
  for (int s = s0; s < s1; s += kUnroll) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (s + u >= s1) break;
      const uint4 w0 = a[u][0], w1 = a[u][1];
      load(u, s + kUnroll + u);
      const uint4 b = hasToken ? myTokens[(s + u - s0) * 4] : uint4{};
      mmaRowsByTokens(acc, w0, w1, b.x, b.y, false);
      mmaRowsByTokens(acc, w0, w1, b.z, b.w, true);
    }
  }
  // acc: c0, c1 = rows g, tokens 2t, 2t + 1; c2, c3 = row g + 8.
  const int token0 = 2 * t;
  if (parts == 1) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int token = token0 + (i & 1), r = row + 8 * (i >> 1);
      if (token < m) y[std::size_t(token) * n + r] = __float2half(acc[i]);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int token = token0 + (i & 1), r = row + 8 * (i >> 1);
    if (token < m) atomicAdd(partials + std::size_t(token) * n + r, acc[i]);
  }
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (tid == 0) last = (atomicAdd(arrivals + rowGroup, 1u) + 1u) % unsigned(parts) == 0u;
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int i = tid; i < m * kRows; i += kWarps * 32) {
    const std::size_t at = std::size_t(i / kRows) * n + rowGroup * kRows + i % kRows;
    y[at] = __float2half(__ldcg(partials + at));
    __stcg(partials + at, 0.0f);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Packed weights (session 30, call 2; the chain's kernel grew from it: runtime/include/cusync/
// packed_mma16_gemv_stage_kernel.cuh, 16 rows per block). Issuing the next share's loads before this one's mmas (two
// shares of registers) measured slower at 1 and 2 blocks per SM in call 2 and is not kept here. The whole-rows kernel's
// shape (8 rows per block over all of K, warp w taking 256-k shares
// w, w + 8, ...), with the weights stored once, ahead of time, in mma fragment order, so that each lane loads its B
// fragments with coalesced 16-byte loads and nothing goes through shared memory; the tokens' A fragments are loaded
// straight from row-major X beside them (lane (g, t): token g, 16 bytes at k = 256 sh + 32 q + 8 t, for q = 0..7 of
// share sh). Why: at m = 8 the whole-rows kernel moves about 6 bytes through L1/shared memory per weight byte (the
// weights' and tokens' global loads, then both written to and read back from the transpose buffer), and ncu puts its
// L1 throughput (76%) above its DRAM (58%) and L2 (68%) throughputs (session 30, call 1). Here: 2 bytes per weight
// byte at m = 8.
//
// Layout: runtime/include/cusync/packed_gemv_layout.h at 8 rows (packGemvWeights packs it): uint4 index
// ((b * shares + sh) * 8 + q) * 32 + lane holds row 8 b + g, k = 256 sh + 32 q + 8 t .. + 8 (zeros past K).
template <int kBlocksPerSm>
__global__ void __launch_bounds__(256, kBlocksPerSm)
    packedRows(const uint4* packed, const __half* x, __half* y, int n, int k, int m) {
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, g = lane / 4, t = lane % 4;
  const int shares = cusync::packedGemvShares(k, cusync::kPackedGemvRows);
  const uint4* mine = packed + std::size_t(blockIdx.x) * shares * 256 + lane;
  const bool hasToken = g < m;
  const __half* token = x + std::size_t(g) * k + 8 * t;
  uint4 wv[8], xv[8];
  const auto load = [&](int sh) {
#pragma unroll
    for (int q = 0; q < 8; ++q) wv[q] = __ldcs(mine + (std::size_t(sh) * 8 + q) * 32);
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      const int kk = 256 * sh + 32 * q;
      xv[q] = hasToken && kk + 8 * t < k ? __ldg(reinterpret_cast<const uint4*>(token + kk)) : uint4{};
    }
  };
  float acc[4] = {};
  for (int sh = warp; sh < shares; sh += 8) {
    load(sh);
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      cusync::detail::mmaTokensByRows(acc, xv[q].x, xv[q].y, wv[q].x, wv[q].y);
      cusync::detail::mmaTokensByRows(acc, xv[q].z, xv[q].w, wv[q].z, wv[q].w);
    }
  }
  __shared__ float warpSums[8][8][8];  // [warp][token][row]
  warpSums[warp][g][2 * t] = acc[0];
  warpSums[warp][g][2 * t + 1] = acc[1];
  __syncthreads();
  const int outToken = tid / 8, row = tid % 8;
  if (outToken < m) {
    float sum = 0.0f;
#pragma unroll
    for (int w8 = 0; w8 < 8; ++w8) sum += warpSums[w8][outToken][row];
    y[std::size_t(outToken) * n + blockIdx.x * 8 + row] = __float2half(sum);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Median us per launch of 10 launches captured in a graph (3 warm-up replays, 11 timed; examples/common/
// graph_timer.cuh, as the examples time).
template <class Launch>
float timeGraph(Launch launch, cudaStream_t stream) {
  return float(cusync::examples::timeWithGraph(launch, stream, 10, 3, 11).medianMicroseconds);
}

struct Shape {
  const char* name;
  int n, k;
};

struct Operands {
  const Shape& s;
  const __half *w, *x;
  __half* y;
  const float* yRef;
  float* partials;
  unsigned* arrivals;
  float readUs;
  cudaStream_t stream;
};

// Poisons Y, runs once, compares the first m token rows with the reference; prints one row with the timing.
template <class Launch>
void measure(const Operands& o, int m, const char* variant, int blocks, int perSm, Launch launch) {
  const std::size_t count = std::size_t(m) * o.s.n;
  CHECK(cudaMemsetAsync(o.y, 0xff, count * 2, o.stream));  // NaN everywhere: every output must be written
  launch(o.stream);
  CHECK(cudaStreamSynchronize(o.stream));
  std::vector<__half> got(count);
  std::vector<float> want(count);
  CHECK(cudaMemcpy(got.data(), o.y, count * 2, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(want.data(), o.yRef, count * 4, cudaMemcpyDeviceToHost));
  double error = 0, norm = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const float v = __half2float(got[i]);
    error = std::isfinite(v) ? std::max(error, double(std::abs(v - want[i]))) : INFINITY;
    norm = std::max(norm, double(std::abs(want[i])));
  }
  const bool ok = error <= 4e-3 * norm + 1e-4;
  anyWrong = anyWrong || !ok;
  const float us = checkOnly ? NAN : timeGraph(launch, o.stream);
  std::printf("%-8s m=%d  %-34s blocks=%5d perSM=%2d  %7.2f us  %5.2f TB/s  floor/this %.3f  %s\n", o.s.name, m,
              variant, blocks, perSm, us, double(o.s.n) * o.s.k * 2 / (us * 1e-6) / 1e12, o.readUs / us,
              ok ? "ok" : "WRONG");
  if (!ok) std::printf("  WRONG: max error %.3g against %.3g\n", error, norm);
}

template <int kTokens>
void runWholeRows(const Operands& o, int m) {
  auto kernel = wholeRows<kTokens>;
  const int smem = cusync::rowMmaGemvSharedBytes(kTokens);
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int perSm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, cusync::kRowMmaGemvThreads, smem));
  const int blocks = o.s.n / cusync::kRowMmaGemvRows;
  char name[64];
  std::snprintf(name, sizeof name, "whole rows (p2, %d-token instance)", kTokens);
  measure(o, m, name, blocks, perSm, [&](cudaStream_t st) {
    kernel<<<blocks, cusync::kRowMmaGemvThreads, smem, st>>>(o.w, o.x, o.y, o.s.n, o.s.k, m);
  });
}

template <int kWarps, int kUnroll>
void runSharedTokens(const Operands& o, int m, int parts) {
  constexpr int kRows = 16 * kWarps;
  if (o.s.n % kRows != 0 || o.s.k % 32 != 0) return;
  const int steps = o.s.k / 32, stepsPerPart = (steps + parts - 1) / parts;
  if ((parts - 1) * stepsPerPart >= steps) return;  // an empty last part
  auto kernel = sharedTokens<kWarps, kUnroll>;
  const int smem = m * tokenStride(stepsPerPart * 4) * 16;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int perSm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kWarps * 32, smem));
  if (perSm == 0) return;
  const int blocks = (o.s.n / kRows) * parts;
  // The arrival counters count modulo this variant's parts, per its row groups.
  CHECK(cudaMemset(o.arrivals, 0, std::size_t(o.s.n) * 4));
  char name[64];
  std::snprintf(name, sizeof name, "shared tokens W=%d U=%d P=%d", kWarps, kUnroll, parts);
  measure(o, m, name, blocks, perSm, [&](cudaStream_t st) {
    kernel<<<blocks, kWarps * 32, smem, st>>>(o.w, o.x, o.y, o.partials, o.arrivals, o.s.n, o.s.k, m, parts,
                                               stepsPerPart);
  });
}

// few_token_gemv_probe [--check-only] [--shared-tokens] [shape name] [m]: every shape and m = 1, 2, 4, 8 unless named.
template <class Kernel>
void runPacked(const Operands& o, int m, const uint4* packed, Kernel kernel, const char* name) {
  int perSm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, 256, 0));
  const int blocks = o.s.n / 8;
  measure(o, m, name, blocks, perSm, [&](cudaStream_t st) {
    kernel<<<blocks, 256, 0, st>>>(packed, o.x, o.y, o.s.n, o.s.k, m);
  });
}

int main(int argc, char** argv) {
  const char* onlyShape = nullptr;
  int onlyM = 0;
  bool withSharedTokens = false;  // the shared-token variants (session 30, call 1: 1.7-2x slower than whole rows)
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--check-only") checkOnly = true;
    else if (std::string(argv[i]) == "--shared-tokens") withSharedTokens = true;
    else if (onlyShape == nullptr) onlyShape = argv[i];
    else onlyM = std::atoi(argv[i]);
  }
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  void* workspace;
  CHECK(cudaMalloc(&workspace, 32 << 20));
  CHECK_CUBLAS(cublasSetWorkspace(handle, workspace, 32 << 20));
  const Shape shapes[] = {{"gpt3.1", 6144, 12288}, {"gpt3.2", 12288, 6144}, {"llama.1", 5504, 8192},
                          {"llama.2", 8192, 2752}};
  for (const Shape& s : shapes) {
    if (onlyShape != nullptr && std::string(onlyShape) != s.name) continue;
    __half *w, *x, *y;
    float *yRef, *partials;
    unsigned *arrivals, *sink;
    CHECK(cudaMalloc(&w, std::size_t(s.n) * s.k * 2));
    CHECK(cudaMalloc(&x, std::size_t(8) * s.k * 2));
    CHECK(cudaMalloc(&y, std::size_t(8) * s.n * 2));
    CHECK(cudaMalloc(&yRef, std::size_t(8) * s.n * 4));
    CHECK(cudaMalloc(&partials, std::size_t(8) * s.n * 4));
    CHECK(cudaMalloc(&arrivals, std::size_t(s.n) * 4));
    CHECK(cudaMalloc(&sink, 4));
    CHECK(cudaMemset(partials, 0, std::size_t(8) * s.n * 4));
    CHECK(cudaMemset(arrivals, 0, std::size_t(s.n) * 4));
    probeFill<<<1024, 256, 0, stream>>>(w, std::size_t(s.n) * s.k, 1);
    probeFill<<<16, 256, 0, stream>>>(x, std::size_t(8) * s.k, 2);
    probeReference<<<s.n, 256, 0, stream>>>(w, x, yRef, s.n, s.k, 8);
    const std::size_t vectors = std::size_t(s.n) * s.k / 8;
    const float readUs = timeGraph(
        [&](cudaStream_t st) {
          cusync::examples::detail::readOnce<><<<132 * 4, 512, 0, st>>>(reinterpret_cast<const uint4*>(w), vectors,
                                                                         sink);
        },
        stream);
    std::printf("%-8s n=%d k=%d: one-pass read of the weights %.2f us, %.2f TB/s\n", s.name, s.n, s.k, readUs,
                double(s.n) * s.k * 2 / (readUs * 1e-6) / 1e12);
    const Operands o{s, w, x, y, yRef, partials, arrivals, readUs, stream};
    uint4* packed;
    CHECK(cudaMalloc(&packed, cusync::packedGemvVectors(s.n, s.k, cusync::kPackedGemvRows) * 16));
    cusync::packGemvWeights(w, packed, s.n, s.k, 0, stream, cusync::kPackedGemvRows);
    CHECK(cudaStreamSynchronize(stream));
    for (int m : {1, 2, 4, 8}) {
      if (onlyM != 0 && m != onlyM) continue;
      const float one = 1.0f, zero = 0.0f;  // CUBLAS_COMPUTE_32F takes float scalars
      measure(o, m, "cuBLAS (GemmEx, fp32 compute)", 0, 0, [&](cudaStream_t) {
        CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, s.n, m, s.k, &one, w, CUDA_R_16F, s.k, x,
                                  CUDA_R_16F, s.k, &zero, y, CUDA_R_16F, s.n, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
      });
      if (m <= 1) runWholeRows<1>(o, m);
      else if (m <= 2) runWholeRows<2>(o, m);
      else if (m <= 4) runWholeRows<4>(o, m);
      else runWholeRows<8>(o, m);
      runPacked(o, m, packed, packedRows<2>, "packed rows, 2 blocks/SM");
      runPacked(o, m, packed, packedRows<3>, "packed rows, 3 blocks/SM");
      if (!withSharedTokens) continue;
      for (int parts : {1, 2, 3, 4, 6, 8}) {
        runSharedTokens<4, 4>(o, m, parts);
        runSharedTokens<4, 8>(o, m, parts);
        runSharedTokens<8, 4>(o, m, parts);
        runSharedTokens<2, 8>(o, m, parts);
      }
    }
    CHECK(cudaFree(packed));
    CHECK(cudaFree(w));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(yRef));
    CHECK(cudaFree(partials));
    CHECK(cudaFree(arrivals));
    CHECK(cudaFree(sink));
  }
  CHECK(cudaFree(workspace));
  CHECK_CUBLAS(cublasDestroy(handle));
  std::printf(anyWrong ? "SOME VARIANT WRONG\n" : "all variants correct\n");
  return anyWrong ? 1 : 0;
}
