// How the persistent hooked GEMMs (cooperative: tile_sync_persistent_gemm_kernel.hpp; pingpong:
// tile_sync_pingpong_gemm_kernel.hpp) hand work units from a scheduler warp to their TMA producer warp and math warp
// groups. Device code; needs CUTLASS.
//
// A scheduler warp decides each work unit: it draws the unit from the stage's tickets, or with static units takes
// its block's next one (StageView::staticUnits), and commits it to a small shared-memory pipeline of units
// (CUTLASS's PipelineAsync), which the TMA producer warp and the math warp groups read. The TMA warp loads each
// unit's operands, waiting before each A k-block another stage produces (TileSyncMainloop). The unit past the
// launch's last (the stop ticket, or the block's first static unit past it) is committed too, and stops everyone;
// the operand pipeline's tail follows. A ticket that draws a stream-K chunk (stream_k_split.h) is committed as the
// chunk's fragments, one unit each, so the other warps see only tiles and k-ranges.
//
// The lean persistent GEMM (TileSyncPersistentGemmKernel's Lean) hands nothing over: it takes static units only,
// which each role can compute for itself (StageView::staticTileUnit), so its TMA warp and math warp groups do, with
// no scheduler warp, no unit pipeline and no draw gate between them (produceOwnStaticUnits below). Why: token
// generation's GEMM blocks run one unit of 4-13 k-blocks each, and every step between a block's start and its first
// load or its post shows in the launch; the hand-off and the features around it took the decode output GEMM from
// 16 to 21 us (docs/BENCHMARKS.md, issue 14, session 22).
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/pipeline/pipeline.hpp>

#include "cusync/cutlass/load_order_namespace.hpp"
#include "cusync/cutlass/tile_sync_gemm_kernel.hpp"
#include "cusync/split_k_range.h"
#include "cusync/stage_view.cuh"
#include "cusync/warp_uniform.cuh"

namespace cusync::cutlass_sm90 {
inline namespace CUSYNC_LOAD_ORDER_NAMESPACE {

// The unit pipeline: one producer thread (the scheduler warp's lane 0) commits each unit, and each of
// `consumerThreads` threads (the math threads and the TMA warp's) releases it after reading. Constructed by every
// thread; a block barrier must follow before first use.
template <class WorkUnitPipeline, class Storage>
CUTLASS_DEVICE WorkUnitPipeline makeWorkUnitPipeline(Storage& storage, bool isProducer, bool isConsumer,
                                                     std::uint32_t consumerThreads) {
  typename WorkUnitPipeline::Params params;
  if (isProducer) params.role = WorkUnitPipeline::ThreadCategory::Producer;
  if (isConsumer) params.role = WorkUnitPipeline::ThreadCategory::Consumer;
  params.producer_arv_count = 1;
  params.consumer_arv_count = consumerThreads;
  params.dst_blockid = 0;
  return WorkUnitPipeline(storage, params);
}

// A consumer thread's next unit (the stop ticket's included): waits until it is committed, reads it, releases its
// slot.
template <class WorkUnitPipeline>
CUTLASS_DEVICE WorkUnit takeWorkUnit(WorkUnitPipeline& pipeline, typename WorkUnitPipeline::PipelineState& read,
                                     WorkUnit const* units) {
  pipeline.consumer_wait(read);
  const WorkUnit unit = units[read.index()];
  pipeline.consumer_release(read);
  ++read;
  return unit;
}

// With tickets, the scheduler warp draws a block's next unit only once the TMA warp has the last kDrawLeadKBlocks
// k-blocks of the current unit left to issue (it arrives on a UnitDrawSignal then; TileSyncMainloop). Why not as soon
// as a slot is free: a drawn unit is one no other block can take, and drawing ahead let the first blocks of a launch
// take two or three units each while the last had none at the tail (GPT-3's QKV GEMM at 512 tokens 10% slower, a
// PDL chain 12%: docs/BENCHMARKS.md, issue 14, session 18, call 1). Why not after the last load, where the TMA warp
// drew before: the draw's latency (atomic, divisions, order table, about 2-3 us) would again sit before the next
// unit's first load. 8 k-blocks of 64 take about 3 us of math on a 128 x 128 tile, and the operand pipeline holds
// 4-7 more: enough to hide the draw, small against a tile of 16-192 k-blocks. Static units need no gate: they are
// the block's own whatever the timing.
inline constexpr int kDrawLeadKBlocks = 8;
using UnitDrawSignal = cutlass::arch::ClusterBarrier;  // one arrival (the TMA warp's elected thread) per unit

// Called by one thread before the block barrier that precedes the unit pipeline's first use.
CUTLASS_DEVICE void initUnitDrawSignal(UnitDrawSignal& signal) {
  signal.init(1);
  cutlass::arch::fence_barrier_init();
}

// The signal both sides of the gate use, or null where the stage takes static units (no gate): the scheduler warp
// waits on it once per unit with work, the TMA warp arrives on it once per unit with work.
CUTLASS_DEVICE UnitDrawSignal* unitDrawGate(StageView const& stage, UnitDrawSignal& signal) {
  return stage.takesStaticUnits() ? nullptr : &signal;
}

// A block's one ticket when it takes static units, by one thread: awaited for the launch's iteration only where the
// input is synchronized (its waits need it; the math warps never read it), only counted where the stage posts or
// splits (consumers' wait-kernels count started blocks), not drawn at all otherwise, as the one-tile kernel decides.
// Returns the iteration (0 where it was not awaited).
template <class InputPolicy>
CUTLASS_DEVICE std::uint32_t takeStaticUnitsTicket(GemmStageSync<InputPolicy> const& sync) {
  if (sync.a.input.synchronized()) return sync.stage.acquireIteration();
  if (sync.stage.countsStartedBlocks()) sync.stage.countBlock();
  return 0;
}

// Issues one unit's operand loads (the TMA warp, whole warp): its k-blocks `kRange` of its tile, each A k-block after
// the wait for its producer tiles, looked at warp-wide first (TileSyncMainloop::loadSynchronized, which also takes
// `gate` and `gateLead`), and advances `state` past them.
template <class CollectiveMainloop, class InputPolicy, class LoadInputs>
CUTLASS_DEVICE void loadUnitOperands(CollectiveMainloop& mainloop,
                                     typename CollectiveMainloop::Params const& mainloopParams,
                                     typename CollectiveMainloop::MainloopPipeline& mainloopPipeline,
                                     typename CollectiveMainloop::PipelineState& state, LoadInputs const& loadInputs,
                                     typename CollectiveMainloop::TensorStorage& tensors,
                                     GemmStageSync<InputPolicy> const& sync, WorkUnit const& unit, KBlockRange kRange,
                                     UnitDrawSignal* gate = nullptr, int gateLead = 0) {
  using namespace cute;
  kRange = KBlockRange{warpUniform(kRange.begin), warpUniform(kRange.count)};  // for the compiler: warp_uniform.cuh
  Tensor gA_mkl = get<0>(loadInputs);
  auto k_tile_iter = cute::make_coord_iterator(idx2crd(kRange.begin, shape<3>(gA_mkl)), shape<3>(gA_mkl));
  auto blk_coord = make_coord(int(unit.ticket.tile.y), int(unit.ticket.tile.x), _, int(unit.ticket.tile.z));
  // The whole warp looks at every producer tile the unit reads first (TileSyncMainloop::lookAtProducedA); the load
  // thread then checks nothing at the k-blocks whose tiles it found posted.
  const std::uint32_t knownPostedEnd = CollectiveMainloop::lookAtProducedA(sync.a, int(unit.ticket.tile.y),
                                                                           kRange.begin, kRange.count, unit.ticket);
#if defined(CUSYNC_DIAGNOSTIC_TWO_LAUNCH_NO_WAIT)  // diagnostic builds only (wrong results): bounds what waits cost
  const ProducedOperandA<InputPolicy> a{};
#else
  const ProducedOperandA<InputPolicy>& a = sync.a;
#endif
  mainloop.loadSynchronized(mainloopParams, mainloopPipeline, state, loadInputs, blk_coord, k_tile_iter,
                            kRange.count, tensors, a, sync.loadOrder, unit.ticket, sync.stage, knownPostedEnd,
                            /*blockRankInCluster=*/0, /*extraTransactionBytes=*/0, gate, gateLead);
  state.advance(kRange.count);
}

// Called by the whole scheduler warp (warp 1 of the producer warp group, otherwise idle): decides the block's
// units, one after the other, and commits each to the unit pipeline, until the unit without work. Why a warp of its
// own: deciding a unit takes a ticket's atomic, divisions and a read of the order table, all dependent; done by the
// TMA warp it sat between one unit's last load and the next unit's first, and the math warps waited for data at every
// tile boundary (docs/BENCHMARKS.md, issue 14, session 17). Progress is unchanged: units are still drawn one at a
// time in the stage's order by one warp, and a block holds at most one unit more than it has started loading (with
// tickets; with static units no other block could take them anyway).
// With static units (StageView::staticUnits) lane 0 keeps the block's place in its sequence and the launch's
// iteration, from the block's one ticket (takeStaticUnitsTicket). A ticket that draws a stream-K chunk
// (stream_k_split.h) is committed as the chunk's fragments, one unit each, with no new ticket between them.
template <class WorkUnitPipeline, class InputPolicy>
CUTLASS_DEVICE void scheduleUnits(WorkUnitPipeline& unitPipeline, WorkUnit* units,
                                  GemmStageSync<InputPolicy> const& sync, UnitDrawSignal& drawSignal) {
  if (cutlass::canonical_lane_idx() != 0) return;
  auto unit_write = cutlass::make_producer_start_state<WorkUnitPipeline>();
  const bool staticUnits = sync.stage.takesStaticUnits();
  std::uint32_t staticPosition = 0;
  const std::uint32_t staticIteration = staticUnits ? takeStaticUnitsTicket(sync) : 0u;
  UnitDrawSignal* const gate = unitDrawGate(sync.stage, drawSignal);
  WorkUnit previous{TileTicket{TileCoord{}, 0u}, kNoWorkLeft};
  std::uint32_t gatePhase = 0;
  while (true) {
    WorkUnit next{TileTicket{TileCoord{}, 0u}, kNoWorkLeft};
    if (previous.isStreamK()) next = sync.stage.nextStreamKFragment(previous);
    if (!next.hasWork()) {
      next = staticUnits ? sync.stage.staticUnit(blockIdx.x, staticPosition++, staticIteration)
                         : sync.stage.acquireWorkUnit(TileCoord{}, 0);
      if (next.isStreamK()) next = sync.stage.nextStreamKFragment(next);  // the chunk's first fragment
    }
    unitPipeline.producer_acquire(unit_write);
    units[unit_write.index()] = next;
    unitPipeline.producer_commit(unit_write);
    ++unit_write;
    if (!next.hasWork()) break;
    if (gate != nullptr) {  // the TMA warp arrives once per unit with work, as its last kDrawLeadKBlocks begin
      gate->wait(gatePhase);
      gatePhase ^= 1u;
    }
    previous = next;
  }
}

// Called by the whole TMA producer warp: takes each unit the scheduler warp committed (a consumer of the unit
// pipeline, as the math threads are) and loads its operands. `kRangeOf(unit)`: the unit's k-blocks. With tickets it
// arrives on `drawSignal` as each unit's last kDrawLeadKBlocks k-blocks begin (scheduleUnits waits for it).
template <class CollectiveMainloop, class WorkUnitPipeline, class InputPolicy, class LoadInputs, class KRangeOf>
CUTLASS_DEVICE void produceScheduledUnits(CollectiveMainloop& mainloop,
                                          typename CollectiveMainloop::Params const& mainloopParams,
                                          typename CollectiveMainloop::MainloopPipeline& mainloopPipeline,
                                          WorkUnitPipeline& unitPipeline, WorkUnit const* units,
                                          LoadInputs const& loadInputs,
                                          typename CollectiveMainloop::TensorStorage& tensors,
                                          GemmStageSync<InputPolicy> const& sync, KRangeOf kRangeOf,
                                          UnitDrawSignal& drawSignal) {
  using MainloopPipeline = typename CollectiveMainloop::MainloopPipeline;
  auto mainloop_pipe_producer_state = cutlass::make_producer_start_state<MainloopPipeline>();
  typename WorkUnitPipeline::PipelineState unit_read;
  UnitDrawSignal* const gate = unitDrawGate(sync.stage, drawSignal);
  while (true) {
    const WorkUnit unit = takeWorkUnit(unitPipeline, unit_read, units);
    if (!unit.hasWork()) break;
    loadUnitOperands(mainloop, mainloopParams, mainloopPipeline, mainloop_pipe_producer_state, loadInputs, tensors,
                     sync, unit, kRangeOf(unit), gate, kDrawLeadKBlocks);
  }
  mainloop.load_tail(mainloopPipeline, mainloop_pipe_producer_state);
}

// The lean persistent GEMM's TMA warp (called by the whole warp): takes the block's one ticket as scheduleUnits
// does with static units (takeStaticUnitsTicket), then loads the operands of the block's static units in turn,
// computing each itself.
template <class CollectiveMainloop, class InputPolicy, class LoadInputs>
CUTLASS_DEVICE void produceOwnStaticUnits(CollectiveMainloop& mainloop,
                                          typename CollectiveMainloop::Params const& mainloopParams,
                                          typename CollectiveMainloop::MainloopPipeline& mainloopPipeline,
                                          LoadInputs const& loadInputs,
                                          typename CollectiveMainloop::TensorStorage& tensors,
                                          GemmStageSync<InputPolicy> const& sync, int kBlocksOfTile) {
  using MainloopPipeline = typename CollectiveMainloop::MainloopPipeline;
  std::uint32_t iteration = 0;
  if (cutlass::canonical_lane_idx() == 0) iteration = takeStaticUnitsTicket(sync);
  iteration = __shfl_sync(0xffffffffu, iteration, 0);
  auto mainloop_pipe_producer_state = cutlass::make_producer_start_state<MainloopPipeline>();
  for (std::uint32_t position = 0;; ++position) {
    const WorkUnit unit = sync.stage.staticTileUnit(blockIdx.x, position, iteration);
    if (!unit.hasWork()) break;
    loadUnitOperands(mainloop, mainloopParams, mainloopPipeline, mainloop_pipe_producer_state, loadInputs, tensors,
                     sync, unit, kBlocksOfPart(unit.part, unit.parts, kBlocksOfTile));
  }
  mainloop.load_tail(mainloopPipeline, mainloop_pipe_producer_state);
}

}  // namespace CUSYNC_LOAD_ORDER_NAMESPACE
}  // namespace cusync::cutlass_sm90
