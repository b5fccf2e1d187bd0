// The fused chain's epilogue off the math warp groups: the math warps round a unit's accumulators to fp16 into a
// tile staged in shared memory and go on to the next unit's MMA at once; three epilogue warps (the producer warp
// group's otherwise idle warps 1-3) read the staged tile back, apply the activation, store it to global memory and
// post it. Device code; needs CUTLASS/CuTe.
//
// Why: in the cooperative kernel both math warp groups ran the epilogue (activation, conversion, shared-memory
// staging, TMA stores, waiting for them to complete, the post) while the tensor cores idled: 3-10% of a unit at
// large M and 13-17% at M = 1 (docs/BENCHMARKS.md, session 6 and session 10 unit traces). Here the math warps pay a
// conversion and 4-byte shared-memory stores per accumulator pair.
//
// The whole tile is staged, not a ring of subtiles: the epilogue warps are fewer than the math warps, so a ring
// would have the math warps wait for them for most of the tile. The cost is shared memory (TileM x TileN x 2 bytes,
// taken from the mainloop's stages), and the rounding: the activation reads the fp16-rounded GEMM output, as torch's
// eager `gelu(x @ w)` does, instead of CUTLASS's fp32 accumulator.
//
// Hand-off (one staged tile, two barriers): the math threads wait on `empty` until the epilogue warps have read
// the previous tile, write the tile (and thread 0 the unit record), and arrive on `full`; the epilogue warps wait
// on `full`, store, arrive on `empty`, and post. Every arriving thread waits for the other barrier first, so neither
// barrier runs more than one phase ahead of its waiters. The epilogue warps wait for nothing but `full`, and the
// math warps stage unit u before they need unit u + 1's operands, so a post the chain waits for is never held behind
// a wait of its own block.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_fp16.h>
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/cutlass.h>

#include "cusync/fast_silu.cuh"
#include "cusync/gelu.cuh"
#include "cusync/staged_tile_layout.h"
#include "cusync/tile.h"

namespace cusync::cutlass_sm90 {

enum class StagedActivation { Identity, Gelu, PairedSwiGlu };

// What the math warps hand over with a staged tile: whose tile it is, or that no more will come.
struct StagedUnit {
  static constexpr std::uint32_t kNoMoreUnits = ~0u;
  TileCoord tile;
  std::uint32_t stage = kNoMoreUnits;  // the GEMM of the chain
  std::uint32_t queueIndex = 0;        // for the unit trace
};

template <int kTileRows, int kMaxTileColumns>
struct StagedTileStorage {
  static_assert(kTileRows % 8 == 0 && kMaxTileColumns % 8 == 0, "whole 8 x 8 blocks of 16-byte chunks");
  alignas(128) uint4 chunks[kTileRows * kMaxTileColumns / StagedTileLayout::kChunkColumns];
  cutlass::arch::ClusterBarrier full;   // every math thread, once the tile (and thread 0's unit record) is written
  cutlass::arch::ClusterBarrier empty;  // every epilogue thread, once it has read the tile
  StagedUnit unit;
};

// The producer warp group's warps 1-3.
inline constexpr int kStagedEpilogueThreads = 3 * 32;
// Named barrier of the epilogue warps before a post: a user id, to which NamedBarrier::sync adds the ids CUTLASS
// reserves (FirstUserBarrier, 8). It was FirstUserBarrier itself until session 37, so the hardware got id 16, past
// the 16 barriers PTX allows (0-15).
inline constexpr std::uint32_t kStagedEpilogueBarrier = 0;

namespace detail {
// CUTLASS's mbarrier calls carry no memory clobber: these keep the compiler's shared-memory accesses on their side.
CUTLASS_DEVICE void stagedWait(cutlass::arch::ClusterBarrier& barrier, std::uint32_t parity) {
  barrier.wait(parity);
  asm volatile("" ::: "memory");
}
CUTLASS_DEVICE void stagedArrive(cutlass::arch::ClusterBarrier& barrier) {
  asm volatile("" ::: "memory");
  barrier.arrive();
}
}  // namespace detail

// Math threads, before they write the staged tile (or the end record) for the `staged`-th time: the epilogue warps
// have read the previous one.
template <class Storage>
CUTLASS_DEVICE void waitStagedTileFree(Storage& storage, std::uint32_t staged) {
  if (staged > 0) detail::stagedWait(storage.empty, (staged - 1) & 1u);
}

// Called once, by one thread, before the block barrier that follows the kernel's pipeline setup.
template <class Storage>
CUTLASS_DEVICE void initStagedTile(Storage& storage, int mathThreads) {
  storage.full.init(std::uint32_t(mathThreads));
  storage.empty.init(std::uint32_t(kStagedEpilogueThreads));
  cutlass::arch::fence_barrier_init();
}

// Math threads: hand over unit `unit`'s tile (shape TileShape) from the wgmma accumulators; `staged` counts the
// tiles this block staged before.
template <class TileShape, class Storage, class Accumulators, class TiledMma>
CUTLASS_DEVICE void stageAccumulators(Storage& storage, std::uint32_t staged, StagedUnit const& unit,
                                      Accumulators const& accumulators, TiledMma tiled_mma, int mmaThreadIndex) {
  using namespace cute;
  constexpr std::uint32_t kRows = size<0>(TileShape{});
  // Values 2i and 2i + 1 of a thread's wgmma accumulators are adjacent columns of one row (the atom's values are
  // (2, 2, N/8): two columns, the row 8 further down, one group per 8 columns).
  static_assert(decltype(size<0, 0>(accumulators))::value == 2, "wgmma accumulators in column pairs");
  waitStagedTileFree(storage, staged);
  auto coordinates =
      tiled_mma.get_thread_slice(mmaThreadIndex).partition_C(make_identity_tensor(take<0, 2>(TileShape{})));
  char* bytes = reinterpret_cast<char*>(storage.chunks);
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < int(size(accumulators)); i += 2) {
    const std::uint32_t row = std::uint32_t(get<0>(coordinates(i)));
    const std::uint32_t column = std::uint32_t(get<1>(coordinates(i)));
    *reinterpret_cast<__half2*>(bytes + StagedTileLayout::byteOffset(kRows, row, column)) =
        __floats2half2_rn(accumulators(i), accumulators(i + 1));
  }
  if (mmaThreadIndex == 0) storage.unit = unit;
  detail::stagedArrive(storage.full);
}

// Math threads, after their last unit: tell the epilogue warps that no more tiles come.
template <class Storage>
CUTLASS_DEVICE void finishStaging(Storage& storage, std::uint32_t staged, int mmaThreadIndex) {
  waitStagedTileFree(storage, staged);
  if (mmaThreadIndex == 0) storage.unit = StagedUnit{};
  detail::stagedArrive(storage.full);
}

// One GEMM's epilogue in the staged form: the activation and the output, as the epilogue warps apply them to a
// staged tile. The kernel-facing part (pipeline and storage types, prefetch) is the one CUTLASS's collective
// epilogues have, with `BaseEpilogue`'s pipeline types so that the kernel's pipeline plumbing stays one; this
// epilogue uses none of them.
template <StagedActivation kActivation, class BaseEpilogue, class TileShape>
class StagedTileEpilogue {
 public:
  static constexpr bool kStaged = true;
  using LoadPipeline = typename BaseEpilogue::LoadPipeline;
  using LoadPipelineState = typename BaseEpilogue::LoadPipelineState;
  using StorePipeline = typename BaseEpilogue::StorePipeline;
  using StorePipelineState = typename BaseEpilogue::StorePipelineState;
  using PipelineStorage = typename BaseEpilogue::PipelineStorage;
  static constexpr bool RequiresTransactionBytes = false;  // it loads no C
  using ElementC = void;
  using ElementD = cutlass::half_t;
  struct TensorStorage {};

  static constexpr int kTileRows = int(cute::size<0>(TileShape{}));
  static constexpr int kTileColumns = int(cute::size<1>(TileShape{}));
  // The paired SwiGLU turns a TileN-wide [gate | up] tile into TileN / 2 output columns (paired_glu_epilogue.hpp
  // explains the pairing); the others write every column.
  static constexpr int OutputColumnsDivisor = kActivation == StagedActivation::PairedSwiGlu ? 2 : 1;
  static constexpr int kOutputColumns = kTileColumns / OutputColumnsDivisor;
  static constexpr int kOutputChunks = kOutputColumns / int(StagedTileLayout::kChunkColumns);
  static_assert(kOutputColumns % StagedTileLayout::kChunkColumns == 0, "whole 16-byte output chunks per tile row");

  struct Arguments {
    __half* d = nullptr;  // [M, N / OutputColumnsDivisor], row-major
  };
  struct Params {
    __half* d = nullptr;
  };
  template <class ProblemShape>
  static Params to_underlying_arguments(ProblemShape const&, Arguments const& args, void*) {
    return Params{args.d};
  }
  template <class ProblemShape>
  static const char* why_not_implementable(ProblemShape const& problem, Arguments const& args) {
    if (args.d == nullptr) return "the staged epilogue needs its output";
    if (reinterpret_cast<std::uintptr_t>(args.d) % 16 != 0) return "the staged epilogue stores 16-byte chunks: align D";
    if (cute::get<1>(problem) % (int(StagedTileLayout::kChunkColumns) * OutputColumnsDivisor) != 0)
      return "the staged epilogue stores 16-byte chunks: the output's columns must be a multiple of 8";
    if (kActivation == StagedActivation::PairedSwiGlu && cute::get<1>(problem) % kTileColumns != 0)
      return "a paired gate/up GEMM needs N (2 x the intermediate size) to be a multiple of the tile's N: every tile "
             "holds the gate and up columns of the same TileN/2 outputs";
    return nullptr;
  }
  CUTLASS_DEVICE static void prefetch_tma_descriptors(Params const&) {}
  CUTLASS_DEVICE StagedTileEpilogue(Params const&, TensorStorage&) {}

  // Epilogue threads (`thread` in [0, kStagedEpilogueThreads)): tile `tile` of a GEMM with `rows` x `columns`
  // outputs before the pairing, from the staged chunks to global memory. A warp takes 4 rows x 8 output chunks at a
  // step, so each row's 8 lanes store 128 contiguous bytes, and kBatch steps at once: their shared-memory loads
  // issue back to back and their activations interleave. One step at a time, each warp waited for its load, then
  // for its tanh, per chunk: 20-38 us per 256 x 192 GELU tile (session 11, device call 3) where the math warps
  // take 230 us per unit, and every post that late.
  CUTLASS_DEVICE static void storeTile(Params const& params, int rows, int columns, TileCoord tile, uint4 const* chunks,
                                       int thread) {
    constexpr int kWarps = kStagedEpilogueThreads / 32;
    constexpr int kChunkGroups = (kOutputChunks + 7) / 8;
    constexpr int kSteps = kTileRows / 4 * kChunkGroups;
    constexpr int kSourcesPerChunk = kActivation == StagedActivation::PairedSwiGlu ? 2 : 1;
    constexpr int kBatch = 4 / kSourcesPerChunk;  // 16 registers of staged data in flight per thread
    const int lane = thread % 32;
    const int outputColumns = columns / OutputColumnsDivisor;
    const int firstRow = int(tile.y) * kTileRows;
    const int firstColumn = int(tile.x) * kOutputColumns;
    // Where step `step` of this lane reads (tile row r, output chunk c) and writes (`offset` into D); `inside` is
    // false past the tile's chunks or the problem's edges. The store loop computes it again rather than keeping
    // kBatch of them: the producer warp group has 56 registers, and the staged data takes 16.
    struct Place {
      int r, c;
      std::int64_t offset;
      bool inside;
    };
    auto place = [&](int step) {
      Place p;
      p.r = step / kChunkGroups * 4 + lane / 8;
      p.c = step % kChunkGroups * 8 + lane % 8;
      const int row = firstRow + p.r;
      const int column = firstColumn + p.c * int(StagedTileLayout::kChunkColumns);
      p.offset = std::int64_t(row) * outputColumns + column;
      p.inside = step < kSteps && p.c < kOutputChunks && row < rows && column < outputColumns;
      return p;
    };
    for (int first = thread / 32; first < kSteps; first += kWarps * kBatch) {
      uint4 staged[kBatch][kSourcesPerChunk];
      CUTLASS_PRAGMA_UNROLL
      for (int b = 0; b < kBatch; ++b) {
        const Place p = place(first + b * kWarps);
        if (!p.inside) continue;
        CUTLASS_PRAGMA_UNROLL
        for (int source = 0; source < kSourcesPerChunk; ++source)
          staged[b][source] = chunks[StagedTileLayout::chunkIndex(kTileRows, p.r, p.c + source * kOutputChunks)];
      }
      CUTLASS_PRAGMA_UNROLL
      for (int b = 0; b < kBatch; ++b) {
        const Place p = place(first + b * kWarps);
        if (!p.inside) continue;
        uint4 result = staged[b][0];
        if constexpr (kActivation == StagedActivation::Gelu) {
          result = gelu(result);
        } else if constexpr (kActivation == StagedActivation::PairedSwiGlu) {
          result = swiGlu(result, staged[b][kSourcesPerChunk - 1]);
        }
        *reinterpret_cast<uint4*>(params.d + p.offset) = result;
      }
    }
  }

 private:
  // The activations in half2 arithmetic (gelu.cuh, fast_silu.cuh): the staged values are fp16 already, and three
  // epilogue warps have a third of the math warps' issue slots and share the MUFU with them, so a tanh per pair
  // instead of a MUFU op and two conversions per value (or, for SiLU, an exponential and a reciprocal).
  CUTLASS_DEVICE static uint4 gelu(uint4 chunk) {
    __half2* pairs = reinterpret_cast<__half2*>(&chunk);
    CUTLASS_PRAGMA_UNROLL
    for (int k = 0; k < 4; ++k) {
      if constexpr (kGeluTanh) {
        pairs[k] = geluFastHalf2(pairs[k]);
      } else {
        const float2 v = __half22float2(pairs[k]);
        pairs[k] = __floats2half2_rn(geluFast(v.x), geluFast(v.y));
      }
    }
    return chunk;
  }
  // S = silu(gate) * up: the gate chunk's partner lies TileN / 2 columns to the right (the pairing).
  CUTLASS_DEVICE static uint4 swiGlu(uint4 gate, uint4 up) {
    __half2* g = reinterpret_cast<__half2*>(&gate);
    const __half2* u = reinterpret_cast<const __half2*>(&up);
    CUTLASS_PRAGMA_UNROLL
    for (int k = 0; k < 4; ++k) g[k] = __hmul2(fastSiluHalf2(g[k]), u[k]);
    return gate;
  }
};

template <class Epilogue, class = void>
struct IsStagedEpilogue : std::false_type {};
template <class Epilogue>
struct IsStagedEpilogue<Epilogue, std::void_t<decltype(Epilogue::kStaged)>> : std::bool_constant<Epilogue::kStaged> {};

}  // namespace cusync::cutlass_sm90
