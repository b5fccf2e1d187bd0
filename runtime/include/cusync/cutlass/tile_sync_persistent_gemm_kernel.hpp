// The persistent form of TileSyncGemmKernel: a fixed number of blocks (at most one wave), each taking tiles from the
// stage's ticket counter until the launch has none left. Device code; needs CUTLASS.
//
// It is also the kernel that runs stream-K chunks (Stage::setStreamK, stream_k_split.h): a chunk may finish one
// tile's k-range and start the next's, which only a block that takes several units can do. With one chunk per
// block after the whole tiles, every block does the same number of k-blocks, where split-K of the last wave leaves
// the last wave's tiles in many parts (GPT-3's QKV GEMM at 512 tokens: 144 tiles on 132 SMs).
//
// Why persistent: a block that keeps running overlaps one tile's epilogue (and the wait for its stores) with the
// TMA loads of its next tile, and pays the pipeline set-up once, not per tile; CUTLASS's own sm90 kernels are
// persistent for that reason. Why dynamic: CUTLASS's persistent scheduler gives each block a fixed list of tiles,
// so a block that starts late (on an SM the other stage still holds) finishes late (docs/GPU_NOTES.md). Here every
// tile goes to whichever block asks next, in the stage's tile order, as in the non-persistent kernel; or, with static
// units (StageView::staticUnits), CUTLASS's fixed lists, which are faster where no block starts late.
//
// How the roles share a tile: a scheduler warp (warp 1 of the producer warp group) decides each unit and commits it
// to a small shared-memory pipeline of units (CUTLASS's PipelineAsync), up to kWorkUnitStages ahead of the math warp
// groups; the TMA producer warp and the math warp groups read every unit from it (persistent_unit_handoff.hpp). The
// unit past the launch's last (StageView::persistentBlocks) is committed too, and stops everyone.
//
// Lean (the template's last argument): static units only, computed by each role for itself, no stream-K and no
// split-K summing in L2; can_implement refuses a stage or split that needs them. It compiles none of that code:
// blocks that run one short unit each (token generation) pay for every step they execute (docs/BENCHMARKS.md,
// issue 14, session 22; persistent_unit_handoff.hpp).
//
// Traces (block_trace.h) get one record per block: its first unit's start and last MMA, and when its last unit was
// done.
//
// Everything else is the non-persistent kernel's: CUTLASS's collectives, the wait before each A k-block in the
// producer warp, the post after the tile's bulk stores have completed, split-K by last arrival, the PDL trigger.
// The mainloop and epilogue shared memory are separate (not a union), since the next tile's loads overlap the
// current tile's epilogue.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/pipeline/pipeline.hpp>

#include "cusync/cutlass/persistent_unit_handoff.hpp"
#include "cusync/cutlass/tile_sync_gemm_kernel.hpp"
#include "cusync/cutlass/tile_post.hpp"
#include "cusync/split_k_range.h"
#include "cusync/warp_uniform.cuh"

namespace cusync::cutlass_sm90 {
inline namespace CUSYNC_LOAD_ORDER_NAMESPACE {

template <class CollectiveMainloop_, class CollectiveEpilogue_, class InputPolicy_, class OutputPolicy_,
          int MinBlocksPerSm_ = 1, bool Lean_ = false>
class TileSyncPersistentGemmKernel
    : public TileSyncGemmKernel<CollectiveMainloop_, CollectiveEpilogue_, InputPolicy_, OutputPolicy_,
                                MinBlocksPerSm_> {
  using Base =
      TileSyncGemmKernel<CollectiveMainloop_, CollectiveEpilogue_, InputPolicy_, OutputPolicy_, MinBlocksPerSm_>;

 public:
  using typename Base::CollectiveEpilogue;
  using typename Base::CollectiveMainloop;
  using typename Base::InputPolicy;
  using typename Base::OutputPolicy;
  using typename Base::Params;
  using typename Base::TileShape;
  using typename Base::TiledMma;
  using typename Base::ClusterShape;
  using typename Base::MainloopPipeline;
  using typename Base::EpiStorePipeline;
  using Base::LoadRegisterRequirement;
  using Base::MaxThreadsPerBlock;
  using Base::MinBlocksPerSm;
  using Base::MmaRegisterRequirement;
  using Base::NumMmaThreads;
  static constexpr bool Persistent = true;
  static constexpr bool Lean = Lean_;
  using typename Base::Arguments;
  using Base::whyNotImplementable;
  static const char* why_not_implementable(Arguments const& args) {
    if (const char* why = whyNotImplementable(args, true)) return why;
    if constexpr (Lean) {
      if (!args.sync.stage.takesStaticUnits())
        return "the lean persistent GEMM takes static units only (Stage::useStaticUnits)";
      if (args.sync.stage.streamKChunks != 0) return "the lean persistent GEMM runs no stream-K chunks";
      if (args.sync.splitAccumulate)
        return "the lean persistent GEMM reads split-K partials back one by one; it does not sum them in L2";
    }
    return nullptr;
  }
  static bool can_implement(Arguments const& args) { return why_not_implementable(args) == nullptr; }
  // The launch's grid: the stage's persistent block count (Stage::setPersistentBlocks; can_implement refuses 0).
  // Each block draws units until the ticket past the launch's last one, so the count is also part of the ticket
  // arithmetic (StageView::ticketsPerLaunch): launching any other number of blocks would misplace later launches.
  static dim3 get_grid_shape(Arguments const& args) { return dim3(args.sync.stage.persistentBlocks); }
  // Only the TMA producer warp follows the tile sequence, so no epilogue warp may need to load C.
  static_assert(cute::is_void_v<typename CollectiveEpilogue::ElementC>, "the persistent cusync GEMM reads no C operand");

  // Units the scheduler warp may commit ahead of the math warp groups.
  static constexpr int kWorkUnitStages = 2;
  using WorkUnitPipeline = cutlass::PipelineAsync<kWorkUnitStages>;

  struct SharedStorage {
    struct TensorStorage : cute::aligned_struct<128, cute::_1> {
      typename CollectiveEpilogue::TensorStorage epilogue;
      typename CollectiveMainloop::TensorStorage mainloop;
    } tensors;
    struct PipelineStorage : cute::aligned_struct<16, cute::_1> {
      alignas(16) typename CollectiveMainloop::PipelineStorage mainloop;
      alignas(16) typename CollectiveEpilogue::PipelineStorage epi_load;
      alignas(16) typename WorkUnitPipeline::SharedStorage workUnits;
    } pipelines;
    WorkUnit units[kWorkUnitStages];
    UnitDrawSignal unitDrawSignal;  // with tickets: when the scheduler warp may draw the next unit
    std::uint32_t lastArrival;
  };
  static constexpr int SharedStorageSize = sizeof(SharedStorage);

  CUTLASS_DEVICE void operator()(Params const& params, char* smem_buf) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace cute;
    enum class WarpGroupRole { Producer = 0, Consumer0 = 1, Consumer1 = 2 };
    enum class ProducerWarpRole { Mainloop = 0, Warp1 = 1, Epilogue = 2, Warp3 = 3 };

    SharedStorage& shared_storage = *reinterpret_cast<SharedStorage*>(smem_buf);
    const int thread_idx = int(threadIdx.x);
    const int warp_idx = cutlass::canonical_warp_idx_sync();
    const int warp_group_thread_idx = thread_idx % cutlass::NumThreadsPerWarpGroup;
    const int mma_thread_idx = thread_idx % NumMmaThreads;
    const auto warp_group_role = WarpGroupRole(cutlass::canonical_warp_group_idx());
    const auto producer_warp_role = ProducerWarpRole(warp_idx % cutlass::NumWarpsPerWarpGroup);
    const GemmStageSync<InputPolicy>& sync = params.sync;
    const bool isMainloopProducer =
        warp_group_role == WarpGroupRole::Producer && producer_warp_role == ProducerWarpRole::Mainloop;

    if (sync.triggerDependentsAtStart) triggerDependentLaunch();
    if (warp_idx == 0 && cute::elect_one_sync()) {
      CollectiveMainloop::prefetch_tma_descriptors(params.mainloop);
      CollectiveEpilogue::prefetch_tma_descriptors(params.epilogue);
    }

    auto [mainloop_pipeline, epi_load_pipeline, epi_store_pipeline] = Base::makePipelines(
        shared_storage.pipelines, params, isMainloopProducer,
        warp_group_role == WarpGroupRole::Producer && producer_warp_role == ProducerWarpRole::Epilogue,
        warp_group_role != WarpGroupRole::Producer, warp_group_thread_idx);

    // The scheduler warp commits the units; the math threads and the TMA warp read them.
    const bool isScheduler =
        warp_group_role == WarpGroupRole::Producer && producer_warp_role == ProducerWarpRole::Warp1;
    auto unit_pipeline = makeWorkUnitPipeline<WorkUnitPipeline>(
        shared_storage.pipelines.workUnits, isScheduler,
        warp_group_role != WarpGroupRole::Producer || isMainloopProducer, NumMmaThreads + cutlass::NumThreadsPerWarp);

    if (warp_idx == 0 && cute::elect_one_sync()) initUnitDrawSignal(shared_storage.unitDrawSignal);
    // Makes the barrier initialization visible to every thread.
    __syncthreads();

    auto problem_shape_MNKL = params.problem_shape;
    auto blk_shape = TileShape{};
    TiledMma tiled_mma;
    CollectiveMainloop collective_mainloop;
    auto load_inputs = collective_mainloop.load_init(problem_shape_MNKL, params.mainloop);
    const int k_tiles_total = size<3>(get<0>(load_inputs));
    // A unit's k-range: a stream-K fragment's own, else the same balanced split as every hooked kernel
    // (split_k_range.h), over its tile's parts.
    auto kRangeOf = [&](WorkUnit const& unit) { return unit.kBlocks(k_tiles_total); };
    auto blockCoord = [](TileTicket const& t) {
      return make_coord(int(t.tile.y), int(t.tile.x), _, int(t.tile.z));
    };

    if (warp_group_role == WarpGroupRole::Producer) {
      cutlass::arch::warpgroup_reg_dealloc<LoadRegisterRequirement>();
      if constexpr (Lean) {
        if (isMainloopProducer)
          produceOwnStaticUnits(collective_mainloop, params.mainloop, mainloop_pipeline, load_inputs,
                                shared_storage.tensors.mainloop, sync, k_tiles_total);
        return;
      }
      if (isScheduler) {
        scheduleUnits(unit_pipeline, shared_storage.units, sync, shared_storage.unitDrawSignal);
        return;
      }
      if (producer_warp_role != ProducerWarpRole::Mainloop) return;  // no C to load (static_assert above)
      produceScheduledUnits(collective_mainloop, params.mainloop, mainloop_pipeline, unit_pipeline,
                            shared_storage.units, load_inputs, shared_storage.tensors.mainloop, sync, kRangeOf,
                            shared_storage.unitDrawSignal);
      return;
    }

    cutlass::arch::warpgroup_reg_alloc<MmaRegisterRequirement>();
    CollectiveEpilogue collective_epilogue(params.epilogue, shared_storage.tensors.epilogue);
    typename CollectiveMainloop::PipelineState mainloop_pipe_consumer_state;
    typename CollectiveEpilogue::LoadPipelineState epi_load_pipe_consumer_state;
    auto epi_store_pipe_producer_state = cutlass::make_producer_start_state<EpiStorePipeline>();
    typename WorkUnitPipeline::PipelineState unit_read;
    bool storedAnyTile = false;
    // Traced launches: one record per block (block_trace.h), of its first unit: when the math warps took it, when
    // its last MMA completed, and when the block's last unit was done.
    WorkUnit tracedUnit{TileTicket{TileCoord{}, 0u}, kNoWorkLeft};
    std::uint64_t traceStart = 0, traceFirstMmaDone = 0;
    std::uint32_t staticPosition = 0;  // Lean: the block's place in its static units
    while (true) {
      // The math warps never read a unit's iteration (only the TMA warp's waits do): the lean kernel passes 0.
      WorkUnit unit;
      if constexpr (Lean)
        unit = sync.stage.staticTileUnit(blockIdx.x, staticPosition++, 0u);
      else
        unit = takeWorkUnit(unit_pipeline, unit_read, shared_storage.units);
      if (!unit.hasWork()) break;
      const bool tracedFirst = sync.trace != nullptr && !tracedUnit.hasWork();
      if (tracedFirst) {
        tracedUnit = unit;
        traceStart = detail::globalTimerNs();
      }
      const int k_tile_count = warpUniform(kRangeOf(unit).count);
      auto blk_coord = blockCoord(unit.ticket);
      auto accumulators = partition_fragment_C(tiled_mma, take<0, 2>(blk_shape));
      collective_mainloop.mma(mainloop_pipeline, mainloop_pipe_consumer_state, accumulators, k_tile_count,
                              mma_thread_idx, shared_storage.tensors.mainloop, params.mainloop);
      collective_mainloop.mma_tail(mainloop_pipeline, mainloop_pipe_consumer_state, k_tile_count);
      mainloop_pipe_consumer_state.advance(k_tile_count);
      if (tracedFirst) traceFirstMmaDone = detail::globalTimerNs();
      if (unit.parts > 1 &&
          !Base::template reduceSplitPartials<!Lean>(sync, unit.ticket.tile, unit.part, unit.parts, accumulators,
                                                     mma_thread_idx, shared_storage.lastArrival,
                                                     get<0>(problem_shape_MNKL)))
        continue;  // another part of this tile arrives later and finishes it
      auto [epi_load_next, epi_store_next] = collective_epilogue.store(
          epi_load_pipeline, epi_load_pipe_consumer_state, epi_store_pipeline, epi_store_pipe_producer_state,
          problem_shape_MNKL, blk_shape, blk_coord, accumulators, tiled_mma, mma_thread_idx,
          shared_storage.tensors.epilogue);
      epi_load_pipe_consumer_state = epi_load_next;
      epi_store_pipe_producer_state = epi_store_next;
      storedAnyTile = true;
      // The next tile's operands keep streaming in meanwhile.
      postStoredTile<OutputPolicy, int(NumMmaThreads)>(sync.stage, unit.ticket.tile, mma_thread_idx);
    }
    if (storedAnyTile)
      collective_epilogue.store_tail(epi_load_pipeline, epi_load_pipe_consumer_state, epi_store_pipeline,
                                     epi_store_pipe_producer_state);
    if (tracedUnit.hasWork() && mma_thread_idx == 0)
      recordBlockTrace(sync.trace, sync.traceStage, tracedUnit.ticket.tile.x, traceStart, traceFirstMmaDone,
                       tracedUnit.ticket.tile.y, tracedUnit.part);
#else
    printf("cusync TileSyncPersistentGemmKernel requires sm_90a\n");
#endif
  }
};

}  // namespace CUSYNC_LOAD_ORDER_NAMESPACE
}  // namespace cusync::cutlass_sm90
