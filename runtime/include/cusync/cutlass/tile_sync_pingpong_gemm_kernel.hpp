// The persistent hooked GEMM in CUTLASS's pingpong form: two math warp groups take alternate work units, each a whole
// tile, so that one group's epilogue (and its post) runs under the other group's MMA. Device code; needs CUTLASS.
//
// Why: at the attention block's prompt shapes CUTLASS's stock pingpong kernel is its fastest at six of eight GEMMs
// and beats cuBLAS at four (docs/BENCHMARKS.md, issue 14, session 13 call 5): the output GEMM's K of 1024-1536
// gives a tile only 16-24 k-blocks, so a cooperative kernel's exposed epilogue is a large share of each tile.
//
// What it shares with TileSyncPersistentGemmKernel (read that first): a scheduler warp decides every unit (a ticket,
// or static units) and commits it to a shared-memory unit pipeline, which the TMA producer warp reads too; that warp
// waits before each A k-block it loads (TileSyncMainloop), and the unit past the launch's last stops everyone. What
// differs:
//  * Both math warp groups read every unit (the unit pipeline counts their 256 consumer arrivals and the TMA warp's
//    32); group g computes the
//    units at even (g = 0) or odd (g = 1) positions in the block's sequence, and for the other group's units only
//    advances its mainloop and epilogue pipeline states past them, as CUTLASS's pingpong kernel does.
//  * CUTLASS's ordered sequence barrier alternates the groups twice per unit, once around the MMA and once around
//    epilogue + post, so MMAs and epilogues each run one group at a time, in unit order. (Posting after the turn, on
//    a barrier of each group's own, measured the same: docs/BENCHMARKS.md, issue 12, session 37.)
//  * Unsplit only: a split-K part that is not the last to arrive stores nothing, which would leave the two groups'
//    epilogue pipeline states out of step (can_implement refuses split stages).
// Progress is the persistent kernel's: units are drawn in the stage's order by the scheduler warp alone, a unit waits
// only for tiles of earlier stages, and the math groups take the drawn units in order.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/pipeline/pipeline.hpp>

#include "cusync/cutlass/persistent_unit_handoff.hpp"
#include "cusync/cutlass/tile_sync_gemm_kernel.hpp"
#include "cusync/cutlass/tile_post.hpp"
#include "cusync/split_k_range.h"

namespace cusync::cutlass_sm90 {
inline namespace CUSYNC_LOAD_ORDER_NAMESPACE {

template <class CollectiveMainloop_, class CollectiveEpilogue_, class InputPolicy_, class OutputPolicy_>
class TileSyncPingpongGemmKernel
    : public TileSyncGemmKernel<CollectiveMainloop_, CollectiveEpilogue_, InputPolicy_, OutputPolicy_, 1> {
  using Base = TileSyncGemmKernel<CollectiveMainloop_, CollectiveEpilogue_, InputPolicy_, OutputPolicy_, 1>;

 public:
  using typename Base::Arguments;
  using typename Base::ClusterShape;
  using typename Base::CollectiveEpilogue;
  using typename Base::CollectiveMainloop;
  using typename Base::EpiStorePipeline;
  using typename Base::InputPolicy;
  using typename Base::MainloopPipeline;
  using typename Base::OutputPolicy;
  using typename Base::Params;
  using typename Base::TiledMma;
  using typename Base::TileShape;
  static constexpr bool Persistent = true;
  static constexpr int MinBlocksPerSm = 1;
  // A math warp group computes a whole tile: the TiledMma is one group's.
  static constexpr std::uint32_t NumThreadsPerMathGroup = cute::size(TiledMma{});
  static_assert(NumThreadsPerMathGroup == cutlass::NumThreadsPerWarpGroup, "pingpong: one warp group per tile");
  static constexpr std::uint32_t NumMathGroups = 2;
  static constexpr std::uint32_t MaxThreadsPerBlock = (1 + NumMathGroups) * cutlass::NumThreadsPerWarpGroup;
  static_assert(cute::size(ClusterShape{}) == 1, "the pingpong cusync GEMM runs single blocks");
  static_assert(cute::is_void_v<typename CollectiveEpilogue::ElementC>, "the pingpong cusync GEMM reads no C operand");
  // CUTLASS's pingpong split: the accumulators of a whole tile per math thread.
  static constexpr std::uint32_t LoadRegisterRequirement = 40;
  static constexpr std::uint32_t MmaRegisterRequirement = 232;

  static const char* why_not_implementable(Arguments const& args) {
    if (const char* why = Base::whyNotImplementable(args, true)) return why;
    if (args.sync.stage.blocksPerTile > 1 || args.sync.stage.streamKChunks != 0)
      return "the pingpong GEMM runs unsplit";
    return nullptr;
  }
  static bool can_implement(Arguments const& args) { return why_not_implementable(args) == nullptr; }
  static dim3 get_grid_shape(Arguments const& args) { return dim3(args.sync.stage.persistentBlocks); }

  static constexpr int kWorkUnitStages = 2;
  using WorkUnitPipeline = cutlass::PipelineAsync<kWorkUnitStages>;
  // CUTLASS's: two stages per group (MMA, then epilogue), two groups.
  using MathGroupOrderBarrier = cutlass::OrderedSequenceBarrier<2, NumMathGroups>;

  struct SharedStorage {
    struct TensorStorage : cute::aligned_struct<128, cute::_1> {
      typename CollectiveEpilogue::TensorStorage epilogue;
      typename CollectiveMainloop::TensorStorage mainloop;
    } tensors;
    struct PipelineStorage : cute::aligned_struct<16, cute::_1> {
      alignas(16) typename CollectiveMainloop::PipelineStorage mainloop;
      alignas(16) typename CollectiveEpilogue::PipelineStorage epi_load;
      alignas(16) typename WorkUnitPipeline::SharedStorage workUnits;
      alignas(16) typename MathGroupOrderBarrier::SharedStorage mathOrder;
    } pipelines;
    WorkUnit units[kWorkUnitStages];
    UnitDrawSignal unitDrawSignal;  // with tickets: when the scheduler warp may draw the next unit
  };
  static constexpr int SharedStorageSize = sizeof(SharedStorage);

  CUTLASS_DEVICE void operator()(Params const& params, char* smem_buf) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace cute;
    enum class WarpGroupRole { Producer = 0, Math0 = 1, Math1 = 2 };
    enum class ProducerWarpRole { Mainloop = 0, Warp1 = 1, Epilogue = 2, Warp3 = 3 };

    SharedStorage& shared_storage = *reinterpret_cast<SharedStorage*>(smem_buf);
    const int thread_idx = int(threadIdx.x);
    const int warp_idx = cutlass::canonical_warp_idx_sync();
    const int warp_group_thread_idx = thread_idx % cutlass::NumThreadsPerWarpGroup;
    const auto warp_group_role = WarpGroupRole(cutlass::canonical_warp_group_idx());
    const auto producer_warp_role = ProducerWarpRole(warp_idx % cutlass::NumWarpsPerWarpGroup);
    const GemmStageSync<InputPolicy>& sync = params.sync;
    const bool isMainloopProducer =
        warp_group_role == WarpGroupRole::Producer && producer_warp_role == ProducerWarpRole::Mainloop;
    const bool isMath = warp_group_role != WarpGroupRole::Producer;

    if (sync.triggerDependentsAtStart) triggerDependentLaunch();
    if (warp_idx == 0 && cute::elect_one_sync()) {
      CollectiveMainloop::prefetch_tma_descriptors(params.mainloop);
      CollectiveEpilogue::prefetch_tma_descriptors(params.epilogue);
    }

    // The mainloop's stages are consumed by one group each (NumThreadsPerMathGroup consumers), as in CUTLASS.
    auto [mainloop_pipeline, epi_load_pipeline, epi_store_pipeline] = Base::makePipelines(
        shared_storage.pipelines, params, isMainloopProducer,
        warp_group_role == WarpGroupRole::Producer && producer_warp_role == ProducerWarpRole::Epilogue, isMath,
        warp_group_thread_idx);

    // Both groups read every unit.
    // The scheduler warp commits the units; both math groups and the TMA warp read every one.
    const bool isScheduler =
        warp_group_role == WarpGroupRole::Producer && producer_warp_role == ProducerWarpRole::Warp1;
    auto unit_pipeline = makeWorkUnitPipeline<WorkUnitPipeline>(
        shared_storage.pipelines.workUnits, isScheduler, isMath || isMainloopProducer,
        NumMathGroups * NumThreadsPerMathGroup + cutlass::NumThreadsPerWarp);

    typename MathGroupOrderBarrier::Params math_order_params;
    math_order_params.group_id = isMath ? int(warp_group_role) - int(WarpGroupRole::Math0) : 0;
    math_order_params.group_size = NumThreadsPerMathGroup;
    MathGroupOrderBarrier math_order(shared_storage.pipelines.mathOrder, math_order_params);

    if (warp_idx == 0 && cute::elect_one_sync()) initUnitDrawSignal(shared_storage.unitDrawSignal);
    // Makes the barrier initialization visible to every thread.
    __syncthreads();

    auto problem_shape_MNKL = params.problem_shape;
    auto blk_shape = TileShape{};
    TiledMma tiled_mma;
    CollectiveMainloop collective_mainloop;
    auto load_inputs = collective_mainloop.load_init(problem_shape_MNKL, params.mainloop);
    const int k_tiles_total = size<3>(get<0>(load_inputs));
    auto blockCoord = [](TileTicket const& t) {
      return make_coord(int(t.tile.y), int(t.tile.x), _, int(t.tile.z));
    };

    if (warp_group_role == WarpGroupRole::Producer) {
      cutlass::arch::warpgroup_reg_dealloc<LoadRegisterRequirement>();
      if (isScheduler) {
        scheduleUnits(unit_pipeline, shared_storage.units, sync, shared_storage.unitDrawSignal);
        return;
      }
      if (producer_warp_role != ProducerWarpRole::Mainloop) return;  // no C to load (static_assert above)
      produceScheduledUnits(collective_mainloop, params.mainloop, mainloop_pipeline, unit_pipeline,
                            shared_storage.units, load_inputs, shared_storage.tensors.mainloop, sync,
                            [k_tiles_total](WorkUnit const&) { return KBlockRange{0, k_tiles_total}; },
                            shared_storage.unitDrawSignal);
      return;
    }

    cutlass::arch::warpgroup_reg_alloc<MmaRegisterRequirement>();
    const std::uint32_t group = std::uint32_t(warp_group_role) - std::uint32_t(WarpGroupRole::Math0);
    CollectiveEpilogue collective_epilogue(params.epilogue, shared_storage.tensors.epilogue);
    typename CollectiveMainloop::PipelineState mainloop_pipe_consumer_state;
    typename CollectiveEpilogue::LoadPipelineState epi_load_pipe_consumer_state;
    auto epi_store_pipe_producer_state = cutlass::make_producer_start_state<EpiStorePipeline>();
    const auto c_tile_count = CollectiveEpilogue::get_load_pipe_increment(blk_shape);
    const auto d_tile_count = CollectiveEpilogue::get_store_pipe_increment(blk_shape);
    typename WorkUnitPipeline::PipelineState unit_read;
    // Traced launches (block_trace.h): one record per block, by math group 0, of its first unit: when the group took
    // it, when its last MMA completed, and when the group's last unit was posted.
    WorkUnit tracedUnit{TileTicket{TileCoord{}, 0u}, kNoWorkLeft};
    std::uint64_t traceStart = 0, traceFirstMmaDone = 0;
    for (std::uint32_t position = 0;; ++position) {
      const WorkUnit unit = takeWorkUnit(unit_pipeline, unit_read, shared_storage.units);
      if (!unit.hasWork()) break;
      const bool tracedFirst = sync.trace != nullptr && group == 0 && !tracedUnit.hasWork();
      if (tracedFirst) {
        tracedUnit = unit;
        traceStart = detail::globalTimerNs();
      }
      if (position % NumMathGroups != group) {
        // The other group's unit: its k-blocks and its epilogue buffers come before this group's next unit.
        mainloop_pipe_consumer_state.advance(k_tiles_total);
        epi_load_pipe_consumer_state.advance(c_tile_count);
        epi_store_pipe_producer_state.advance(d_tile_count);
        continue;
      }
      auto accumulators = partition_fragment_C(tiled_mma, take<0, 2>(blk_shape));
      math_order.wait();  // MMAs one group at a time, in unit order
      collective_mainloop.mma(mainloop_pipeline, mainloop_pipe_consumer_state, accumulators, k_tiles_total,
                              warp_group_thread_idx, shared_storage.tensors.mainloop, params.mainloop);
      math_order.arrive();
      collective_mainloop.mma_tail(mainloop_pipeline, mainloop_pipe_consumer_state, k_tiles_total);
      mainloop_pipe_consumer_state.advance(k_tiles_total);
      if (tracedFirst) traceFirstMmaDone = detail::globalTimerNs();

      math_order.wait();  // epilogues one group at a time: they share the epilogue's shared memory
      auto [epi_load_next, epi_store_next] = collective_epilogue.store(
          epi_load_pipeline, epi_load_pipe_consumer_state, epi_store_pipeline, epi_store_pipe_producer_state,
          problem_shape_MNKL, blk_shape, blockCoord(unit.ticket), accumulators, tiled_mma, warp_group_thread_idx,
          shared_storage.tensors.epilogue);
      // Every TMA store of this tile done before the other group may overwrite the epilogue's shared memory (as
      // CUTLASS's pingpong kernel does), and before the post.
      auto [epi_load_after, epi_store_after] =
          collective_epilogue.store_tail(epi_load_pipeline, epi_load_next, epi_store_pipeline, epi_store_next);
      epi_load_pipe_consumer_state = epi_load_after;
      epi_store_pipe_producer_state = epi_store_after;
      postStoredTile<OutputPolicy, int(NumThreadsPerMathGroup)>(sync.stage, unit.ticket.tile, warp_group_thread_idx);
      math_order.arrive();
    }
    if (tracedUnit.hasWork() && warp_group_thread_idx == 0)
      recordBlockTrace(sync.trace, sync.traceStage, tracedUnit.ticket.tile.x, traceStart, traceFirstMmaDone,
                       tracedUnit.ticket.tile.y, tracedUnit.part);
#else
    printf("cusync TileSyncPingpongGemmKernel requires sm_90a\n");
#endif
  }
};

}  // namespace CUSYNC_LOAD_ORDER_NAMESPACE
}  // namespace cusync::cutlass_sm90
