// The prompt attention stage on CUTLASS's Hopper flash attention (examples/88_hopper_fmha of the nvidia-cutlass
// package: TMA loads, wgmma, a producer warp group and two math warp groups on 64 queries each, online softmax),
// tile-synchronized with cusync. CUTLASS's kernel body runs unchanged; cusync wraps it:
//   - before it, thread 0 takes the block's tile from the stage (its ticket: tile order and iteration) and waits
//     for every QKV tile the tile reads: its own rows' Q, K and V and the K and V of every earlier row tile of its
//     sequence (causal). Under StridedSync (head-wide QKV tiles) a head's Q, K and V share one semaphore per QKV
//     row tile, under RowSync (narrower tiles, qkv_head_tiles.h) every tile of the row does, and the QKV GEMM
//     produces row tiles in order, so the first wait (the tile's own rows, produced last) is the one that spins. Waiting for all of them before the first load should cost little (not measured against waiting per
//     key block, which would need CUTLASS's load loop changed): the FMHA's first loads are the tile's own Q rows,
//     the last ones produced anyway;
//   - the tile scheduler hands CUTLASS's warp roles that tile (one per block) instead of blockIdx;
//   - after it, the math warp groups complete their TMA stores of T and post the tile under the stage's policy,
//     then append the tile's own K and V rows to the caches (S' = 0: positions [0, S) are the prompt's). Nobody in
//     the chain reads the caches, so the post does not wait for the append.
// Device code, sm_90a only; the host side is attention_fmha.cu.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/cutlass.h>
#include <cutlass/kernel_hardware_info.h>

// CUTLASS's example headers (include path: the package's examples/88_hopper_fmha).
#include "collective/fmha_fusion.hpp"
#include "kernel/fmha_kernel_builder.hpp"

#include "attention_fmha.h"
#include "cusync/block_trace.cuh"
#include "cusync/stage_view.cuh"
#include "cusync/stress_delay.cuh"
#include "cusync/typed_stage_view.cuh"
#include "qkv_head_tiles.h"

namespace cusync::examples::attention {
inline namespace CUSYNC_FMHA_BUILD_NAMESPACE {

// The block's tile, written by thread 0 before CUTLASS's kernel body runs and read by every warp role through
// the tile scheduler. It lives in the first kFmhaSlotBytes of dynamic shared memory, CUTLASS's storage after it:
// 1024 bytes keep that storage as aligned as the dynamic base (its TMA buffers need 1024-byte alignment), and a
// static __shared__ variable would shift the dynamic base by an unknown amount.
struct FmhaBlockSlot {
  TileTicket ticket;
  int queryBlock, sequence, head;  // CUTLASS's block coordinate: 128-query block of the sequence, batch, head
  std::uint64_t traceStart, traceWaited;  // traced launches: thread 0's start and the end of its waits
};
inline constexpr int kFmhaSlotBytes = 1024;
static_assert(sizeof(FmhaBlockSlot) <= kFmhaSlotBytes);

// CUTLASS's tile scheduler interface, one tile per block: the one in the slot.
struct StageSlotTileScheduler {
  struct Params {};
  bool valid_ = true;

  CUTLASS_DEVICE explicit StageSlotTileScheduler(Params const&) {}

  template <class ProblemSize, class ClusterShape, class TileShape>
  static Params to_underlying_arguments(ProblemSize const&, cutlass::KernelHardwareInfo, ClusterShape const&,
                                        TileShape const&) {
    return {};
  }
  // Unused: the chain launches one block per tile of the stage.
  static dim3 get_grid_shape(Params const&) { return dim3(0, 0, 0); }

  CUTLASS_DEVICE bool is_valid() const { return valid_; }
  CUTLASS_DEVICE auto get_block_coord() const {
    extern __shared__ char cusyncFmhaShared[];  // the dynamic shared memory base, as the kernel's `smem`
    const auto* slot = reinterpret_cast<const FmhaBlockSlot*>(cusyncFmhaShared);
    return cute::make_coord(slot->queryBlock, cute::_0{}, cute::make_coord(slot->sequence, slot->head));
  }
  CUTLASS_DEVICE StageSlotTileScheduler& operator++() {
    valid_ = false;
    return *this;
  }
};

// CUTLASS's forward kernel as its example builds "tma ws cooperative 128x128x128" (fp16, fp32 accumulation, causal
// mask, 5 K/V stages), on the scheduler above. Head dimension 128, 128 queries a block: the spec's attention tile.
struct PromptFmha {
  using Element = cutlass::half_t;
  using Stride = cute::tuple<int, cute::_1, cute::tuple<int, int>>;  // (row, dimension, (sequence, head))
  using LseStride = cute::tuple<cute::_1, cute::tuple<int, int>>;
  using TileShape = cute::Shape<cute::_128, cute::_128, cute::_128>;  // queries, keys, head dimension
  using Mainloop = cutlass::fmha::collective::FmhaMainloopTmaWarpSpecialized<
      Element, float, float, TileShape, Stride, Stride, Stride, cutlass::fmha::collective::CausalFusion>;
  using Epilogue = cutlass::fmha::collective::FmhaFwdEpilogue<Element, float, typename Mainloop::TileShapePV>;
  using Kernel = cutlass::fmha::kernel::FmhaKernelTmaWarpSpecialized<Mainloop, Epilogue, StageSlotTileScheduler>;
  static constexpr int kThreads = Kernel::MaxThreadsPerBlock;
  static constexpr int kMathThreads = kThreads - cutlass::NumThreadsPerWarpGroup;
  static constexpr int kSharedBytes = kFmhaSlotBytes + Kernel::SharedStorageSize;
};


namespace detail {

inline constexpr int kFmhaQueries = 128;
inline constexpr int kFmhaHeadDim = 128;
// Named barrier of the math warp groups before the post; CUTLASS reserves the ids below FirstUserBarrier (its
// epilogue syncs each warp group on EpilogueBarrier, so the post must not use that one).
inline constexpr std::uint32_t kFmhaPostBarrier = 0;  // NamedBarrier::sync adds the reserved count

// Thread 0: waits for the QKV tiles of `ticket`'s head tile (see the file comment), newest first.
template <class Policy>
__device__ void waitForHeadTileInputs(const InputView<Policy>& input, const StageView& stage, const TileTicket& ticket,
                                      const PromptFmhaArgs& args) {
  const std::uint32_t head = ticket.tile.x;
  const std::uint32_t firstQuery = ticket.tile.y * kFmhaQueries;
  const std::uint32_t sequenceStart = firstQuery / args.sequenceLength * args.sequenceLength;
  const QkvHeadTiles tiles{args.heads, args.qkvTileRows, args.qkvTileColumns};
  const std::uint32_t lastProducerRow = tiles.row(firstQuery + kFmhaQueries - 1);
  const std::uint32_t firstQueryProducerRow = tiles.row(firstQuery);
  SatisfiedSemaphoreCache<4> seen;
  auto wait = [&](TileCoord producerTile) {
    waitThreadCached(input, seen, producerTile, ticket.iteration, stage, ticket.tile);
  };
  for (std::uint32_t producerRow = lastProducerRow + 1; producerRow-- > tiles.row(sequenceStart);) {
    const std::uint32_t tokenRow = producerRow * args.qkvTileRows;
    if (producerRow >= firstQueryProducerRow) tiles.forEach(0, head, tokenRow, wait);  // Q
    tiles.forEach(1, head, tokenRow, wait);                                            // K
    tiles.forEach(2, head, tokenRow, wait);                                            // V
  }
}

// The math warp groups (`MathThreads` threads, `mathThread` in [0, MathThreads)): copies the tile's own K and V
// rows from QKV to the caches, kInFlight 16-byte loads of a thread issued before their stores.
template <int MathThreads>
__device__ void appendHeadTileToCaches(const TileTicket& ticket, const PromptFmhaArgs& args, int mathThread) {
  constexpr int kChunksPerRow = kFmhaHeadDim / 8;              // 16-byte chunks
  constexpr int kChunks = 2 * kFmhaQueries * kChunksPerRow;    // K and V
  constexpr int kInFlight = 8;
  static_assert(kChunks % (MathThreads * kInFlight) == 0);
  const std::uint32_t head = ticket.tile.x;
  const std::uint32_t firstQuery = ticket.tile.y * kFmhaQueries;
  const std::uint32_t sequence = firstQuery / args.sequenceLength;
  const std::uint32_t firstPosition = firstQuery - sequence * args.sequenceLength;
  const std::size_t qkvColumns = std::size_t(3) * args.heads * kFmhaHeadDim;
  auto locate = [&](int chunk, const __half*& source, __half*& destination) {
    const int value = chunk / (kFmhaQueries * kChunksPerRow);  // 0: K, 1: V
    const int row = chunk / kChunksPerRow % kFmhaQueries;
    const int column = chunk % kChunksPerRow;
    source = args.qkv + std::size_t(firstQuery + row) * qkvColumns +
             std::size_t((1 + value) * args.heads + head) * kFmhaHeadDim + column * 8;
    const std::size_t cacheRow = (std::size_t(sequence) * args.heads + head) * args.cacheCapacity + firstPosition + row;
    destination = (value == 0 ? args.kCache : args.vCache) + cacheRow * kFmhaHeadDim + column * 8;
  };
#pragma unroll 1
  for (int first = mathThread; first < kChunks; first += MathThreads * kInFlight) {
    uint4 values[kInFlight];
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) {
      const __half* source;
      __half* destination;
      locate(first + i * MathThreads, source, destination);
      values[i] = __ldcg(reinterpret_cast<const uint4*>(source));
    }
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) {
      const __half* source;
      __half* destination;
      locate(first + i * MathThreads, source, destination);
      *reinterpret_cast<uint4*>(destination) = values[i];
    }
  }
}

}  // namespace detail

template <class InputPolicy, class OutputPolicy>
__global__ void __launch_bounds__(PromptFmha::kThreads, 1)
    promptFmhaKernel(CUTLASS_GRID_CONSTANT typename PromptFmha::Kernel::Params const params,
                     TypedStageView<OutputPolicy> stage, InputView<InputPolicy> qkvInput, PromptFmhaArgs args) {
#if defined(CUTLASS_ARCH_MMA_SM90A_ENABLED)
  extern __shared__ char cusyncFmhaShared[];
  if (args.triggerDependents) triggerDependentLaunch();
  if (args.waitForPriorGrid) waitForPriorGrids();
  auto* slot = reinterpret_cast<FmhaBlockSlot*>(cusyncFmhaShared);
  const StageView& view = stage.untyped;
  if (threadIdx.x == 0) {
    if (args.trace != nullptr) slot->traceStart = ::cusync::detail::globalTimerNs();
    const WorkUnit unit = view.acquireWorkUnit(TileCoord{blockIdx.x, blockIdx.y, blockIdx.z}, 0);
    const std::uint32_t queryBlocks = args.sequenceLength / detail::kFmhaQueries;
    slot->ticket = unit.ticket;
    slot->queryBlock = int(unit.ticket.tile.y % queryBlocks);
    slot->sequence = int(unit.ticket.tile.y / queryBlocks);
    slot->head = int(unit.ticket.tile.x);
    CUSYNC_CHAIN_DELAY(unit.ticket.tile.x * 37u + unit.ticket.tile.y);  // stress builds: a slow consumer
    if (qkvInput.synchronized()) detail::waitForHeadTileInputs(qkvInput, view, unit.ticket, args);
    if (args.trace != nullptr) slot->traceWaited = ::cusync::detail::globalTimerNs();
  }
  __syncthreads();  // extends thread 0's acquire to the block, publishes the slot
  fenceProxyAsyncGlobal();  // the QKV tiles were seen through the generic proxy; CUTLASS reads them with TMA

  PromptFmha::Kernel{}(params, cusyncFmhaShared + kFmhaSlotBytes);

  if (threadIdx.x < cutlass::NumThreadsPerWarpGroup) return;  // the producer warp group: its loads are done
  const int mathThread = int(threadIdx.x) - cutlass::NumThreadsPerWarpGroup;
  const TileTicket ticket = slot->ticket;  // CUTLASS's kernel leaves the slot alone
  // T's tile was stored by TMA: complete the stores (their global writes, not only their shared-memory reads) and
  // order them for the async proxy (the output GEMM reads T with TMA) before the barrier and the release.
  if (view.semaphores != nullptr) {
    completeBulkStores();
    asm volatile("fence.proxy.async.global;" ::: "memory");
  }
  if (mathThread == 0) CUSYNC_CHAIN_DELAY(ticket.tile.x * 11u + ticket.tile.y);  // stress builds: a slow producer
  cutlass::arch::NamedBarrier::sync(PromptFmha::kMathThreads, detail::kFmhaPostBarrier);
  if (view.semaphores != nullptr && mathThread == 0) view.template postThread<OutputPolicy>(ticket.tile);
  // The math warp groups hold MmaRegisterRequirement registers since CUTLASS's body raised them; requesting the
  // same count again (after the barrier above, as setmaxnreg requires) tells ptxas this code has them: past the
  // body's end it otherwise budgets the producer warp group's 24 and spills the cache append's loads.
  cutlass::arch::warpgroup_reg_alloc<PromptFmha::Kernel::MmaRegisterRequirement>();
  // The record ends at the post (T's tile stored and released), not after the cache append below.
  if (args.trace != nullptr && mathThread == 0)
    recordBlockTrace(args.trace, args.traceStage, ticket.tile.x, slot->traceStart, slot->traceWaited, ticket.tile.y);
  detail::appendHeadTileToCaches<PromptFmha::kMathThreads>(ticket, args, mathThread);
#endif
}

}  // namespace CUSYNC_FMHA_BUILD_NAMESPACE
}  // namespace cusync::examples::attention
