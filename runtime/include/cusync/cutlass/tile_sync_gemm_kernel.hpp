// A CUTLASS sm90 GEMM kernel that is one cusync stage: TMA + wgmma warp-specialized, one output tile per block,
// built from CUTLASS's own collectives (CollectiveBuilder mainloop and epilogue). Device code; needs CUTLASS.
//
// What differs from CUTLASS's KernelTmaWarpSpecialized[Cooperative] kernels, and why:
//  * Non-persistent: one block per tile, so the hardware hands tiles to whichever SM frees up. CUTLASS's sm90
//    persistent scheduler assigns each block a fixed list of tiles; blocks that start late on SMs still held by
//    the other stage then finish late, which defeats overlapping two stages (docs/GPU_NOTES.md).
//  * The tile comes from the stage's ticket counter (its tile order), not from blockIdx.
//  * The TMA producer thread waits for the A tiles another stage produces (TileSyncMainloop).
//  * After the epilogue, the math threads complete their TMA stores (bulk wait_group 0, not the .read variant
//    CUTLASS uses, which only frees shared memory), synchronize, and one thread posts the tile (release).
//  * Optionally every block triggers programmatic dependent launch at its start, so a PDL-launched consumer starts
//    only once all of this stage's blocks are resident (progress), and never earlier than that.
//  * Split-K without waiting (split_k_reduction.hpp): with stage.blocksPerTile = P > 1, P blocks share a tile,
//    each over its own k-range; the last to arrive adds the others' partials and posts. A consumer part waits only
//    for the A k-blocks of its own k-range.
//  * Optionally 2x1 clusters (ClusterShape along M): the two blocks of a cluster compute vertically adjacent tiles
//    of one column and share each weight (B) k-block by TMA multicast, half the B traffic from L2 per tile, as
//    cuBLAS's kernels at these shapes do. A ticket cannot pick a cluster's tiles (the peer's must be its
//    neighbour), so a block's tile is the one its index names in the stage's order, which lists each cluster's tiles
//    back to back (Stage::setClusterTileOrder); the counter then only yields the iteration. Split-K comes in whole
//    clusters: both blocks of a cluster take the same part of their two tiles (StageView::clusterUnitAt).
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/gemm.h>
#include <cutlass/kernel_hardware_info.hpp>
#include <cutlass/pipeline/pipeline.hpp>

#include "cusync/cutlass/kernel_pipelines.hpp"
#include "cusync/cutlass/load_order_namespace.hpp"
#include "cusync/cutlass/split_k_reduction.hpp"
#include "cusync/cutlass/tile_sync_mainloop.hpp"
#include "cusync/block_trace.cuh"
#include "cusync/cutlass/tile_post.hpp"
#include "cusync/split_k_range.h"
#include "cusync/stage_view.cuh"
#include "cusync/warp_uniform.cuh"

namespace cusync::cutlass_sm90 {
inline namespace CUSYNC_LOAD_ORDER_NAMESPACE {

// Per-launch synchronization settings of one GEMM stage.
template <class InputPolicy>
struct GemmStageSync {
  StageView stage;                      // this GEMM's stage: tile counter, order, output semaphores
  ProducedOperandA<InputPolicy> a;      // where A comes from (unsynchronized when a.input is null)
  LoadOrder loadOrder = LoadOrder::WaitThenLoad;
  bool triggerDependentsAtStart = false;  // PDL producer: let the next kernel launch once all blocks run
  // Split-K (stage.blocksPerTile > 1, or stream-K): fp32 partials, tileCount * partialSlotsPerTile * TileM * TileN
  // floats, and one arrival counter per tile (zeroed once; the last part of each launch takes it back to 0).
  float* splitPartials = nullptr;
  std::uint32_t* splitArrivals = nullptr;
  bool splitAccumulate = false;  // the parts add into one slot (SplitKBuffers::accumulate; not bitwise reproducible)
  // Diagnostics (block_trace.h): one record per block at trace[blockIdx.x], stage index traceStage; null: none.
  // TileSyncGemmKernel records it, the persistent kernels (cooperative, pingpong) one record per block.
  BlockTrace* trace = nullptr;
  std::uint32_t traceStage = 0;
};

template <class CollectiveMainloop_, class CollectiveEpilogue_, class InputPolicy_, class OutputPolicy_,
          int MinBlocksPerSm_ = 1>
class TileSyncGemmKernel {
 public:
  using CollectiveMainloop = TileSyncMainloop<CollectiveMainloop_>;
  using CollectiveEpilogue = CollectiveEpilogue_;
  using InputPolicy = InputPolicy_;
  using OutputPolicy = OutputPolicy_;
  using TileShape = typename CollectiveMainloop::TileShape;
  using TiledMma = typename CollectiveMainloop::TiledMma;
  using ClusterShape = typename CollectiveMainloop::DispatchPolicy::ClusterShape;
  using ProblemShape = cute::Shape<int, int, int, int>;  // M, N, K, L
  static constexpr std::uint32_t kClusterRows = cute::size<0>(ClusterShape{});
  static_assert(cute::size<1>(ClusterShape{}) == 1 && cute::size<2>(ClusterShape{}) == 1 &&
                    (kClusterRows == 1 || kClusterRows == 2),
                "the one-tile-per-block cusync GEMM runs single blocks or 2x1 clusters");

  static constexpr int MinBlocksPerSm = MinBlocksPerSm_;
  static constexpr bool Persistent = false;  // one block per work unit
  static constexpr std::uint32_t NumLoadWarpGroups = 1;
  static constexpr std::uint32_t NumMmaThreads = cute::size(TiledMma{});
  static constexpr std::uint32_t NumMmaWarpGroups = NumMmaThreads / cutlass::NumThreadsPerWarpGroup;
  static constexpr std::uint32_t MaxThreadsPerBlock = NumMmaThreads + NumLoadWarpGroups * cutlass::NumThreadsPerWarpGroup;

  // Register split between the load warp group and the math warp groups (setmaxnreg). With two blocks per SM each
  // block gets half the register file.
  static constexpr std::uint32_t LoadRegisterRequirement = MinBlocksPerSm == 1 ? 40 : 32;
  static constexpr std::uint32_t MmaRegisterRequirement =
      MinBlocksPerSm == 1 ? 232
                          : ((65536 / MinBlocksPerSm - LoadRegisterRequirement * cutlass::NumThreadsPerWarpGroup) /
                             NumMmaThreads) / 8 * 8;

  // The mainloop and epilogue share shared memory (a union) while a separate warp would load C during the mainloop:
  // safe only because there is no C to load.
  static_assert(cute::is_void_v<typename CollectiveEpilogue::ElementC>,
                "the one-tile-per-block cusync GEMM unions mainloop and epilogue shared memory: it reads no C operand");

  struct SharedStorage {
    union TensorStorage {
      typename CollectiveMainloop::TensorStorage mainloop;
      typename CollectiveEpilogue::TensorStorage epilogue;
    } tensors;
    struct PipelineStorage : cute::aligned_struct<16, cute::_1> {
      alignas(16) typename CollectiveMainloop::PipelineStorage mainloop;
      alignas(16) typename CollectiveEpilogue::PipelineStorage epi_load;
    } pipelines;
    WorkUnit unit;
    std::uint32_t lastArrival;
    std::uint64_t traceStart;  // when thread 0 began (traced launches only)
  };
  static constexpr int SharedStorageSize = sizeof(SharedStorage);

  struct Arguments {
    ProblemShape problem_shape;
    typename CollectiveMainloop::Arguments mainloop;
    typename CollectiveEpilogue::Arguments epilogue;
    GemmStageSync<InputPolicy> sync;
  };

  struct Params {
    ProblemShape problem_shape;
    typename CollectiveMainloop::Params mainloop;
    typename CollectiveEpilogue::Params epilogue;
    GemmStageSync<InputPolicy> sync;
  };

  static Params to_underlying_arguments(Arguments const& args) {
    return Params{args.problem_shape,
                  CollectiveMainloop::to_underlying_arguments(args.problem_shape, args.mainloop, nullptr),
                  CollectiveEpilogue::to_underlying_arguments(args.problem_shape, args.epilogue, nullptr),
                  args.sync};
  }

  // Why a launch of this kernel (one block per work unit, or `persistent`) would be invalid, or null: CUTLASS's
  // limits, a stage grid that is not the problem's tile grid, split-K without buffers or with more parts than
  // k-blocks, and for a persistent kernel a stage without its block count or in hardware order (its blocks take
  // units from the counter until none is left; in hardware order they never run out and loop forever).
  static const char* whyNotImplementable(Arguments const& args, bool persistent) {
    if (!CollectiveMainloop::can_implement(args.problem_shape, args.mainloop) ||
        !CollectiveEpilogue::can_implement(args.problem_shape, args.epilogue))
      return "CUTLASS cannot implement this problem";
    const StageView& stage = args.sync.stage;
    if (!(tileGrid(args.problem_shape) == stage.grid)) return "stage grid does not match the GEMM's tile grid";
    const std::uint32_t parts = stage.blocksPerTile;
    if ((parts > 1 || stage.streamKChunks != 0) &&
        (args.sync.splitPartials == nullptr || args.sync.splitArrivals == nullptr))
      return "split-K needs partial and arrival buffers";
    if (stage.streamKChunks != 0) {
      // A chunk may end in one tile and go on in the next: only a block that takes several units can run it.
      if (!persistent) return "stream-K chunks need the persistent GEMM";
      if (stage.streamKBlocks != cute::ceil_div(cute::get<2>(args.problem_shape), int(cute::size<2>(TileShape{}))))
        return "the stage's stream-K k-blocks per tile are not this GEMM's";
    }
    if (int(parts) > cute::ceil_div(cute::get<2>(args.problem_shape), int(cute::size<2>(TileShape{}))))
      return "more split-K parts than k-blocks";
    if (persistent && stage.persistentBlocks == 0)
      return "a persistent GEMM's stage needs setPersistentBlocks (its grid size)";
    if (persistent && stage.hardwareOrder)
      return "a persistent GEMM takes its tiles from the counter, not blockIdx (hardware order would never stop)";
    if (!persistent && stage.persistentBlocks != 0)
      return "the stage counts persistent blocks, but this GEMM is not persistent";
    if (kClusterRows > 1) {
      if (stage.clusterRows != kClusterRows)
        return "a GEMM in 2x1 clusters needs its stage's tile order in clusters of 2 rows (Stage::setClusterTileOrder)";
      if (stage.hardwareOrder)
        return "a GEMM in clusters takes its tiles from the stage's cluster order, not hardware order";
      if (stage.wholeTiles % kClusterRows != 0 || stage.grid.tileCount() % kClusterRows != 0)
        return "a GEMM in clusters splits whole clusters: its whole tiles and tiles must be multiples of the cluster";
      if (persistent) return "the persistent GEMM runs without clusters";
    }
    return nullptr;
  }
  static const char* why_not_implementable(Arguments const& args) { return whyNotImplementable(args, Persistent); }
  static bool can_implement(Arguments const& args) { return why_not_implementable(args) == nullptr; }

  // The launch's grid: one block per work unit (tile x split-K part). Valid once can_implement(args) holds, which
  // checks that the stage's grid is this problem's tile grid.
  static dim3 get_grid_shape(Arguments const& args) { return dim3(args.sync.stage.workUnits()); }

  // The stage grid of this GEMM: x = N tiles, y = M tiles, z = L (batch), matching the specs' Grid(x, y).
  static GridShape tileGrid(ProblemShape const& problem) {
    return GridShape{static_cast<std::uint32_t>(cute::ceil_div(cute::get<1>(problem), cute::size<1>(TileShape{}))),
                     static_cast<std::uint32_t>(cute::ceil_div(cute::get<0>(problem), cute::size<0>(TileShape{}))),
                     static_cast<std::uint32_t>(cute::get<3>(problem))};
  }

  using MainloopPipeline = typename CollectiveMainloop::MainloopPipeline;
  using EpiLoadPipeline = typename CollectiveEpilogue::LoadPipeline;
  using EpiStorePipeline = typename CollectiveEpilogue::StorePipeline;

  // The pipelines of this kernel's warp roles (kernel_pipelines.hpp); the persistent kernel uses them too.
  template <class PipelineStorage>
  CUTLASS_DEVICE static auto makePipelines(PipelineStorage& storage, Params const& params, bool isMainloopProducer,
                                           bool isEpilogueProducer, bool isMath, int warp_group_thread_idx) {
    return makeKernelPipelines<CollectiveMainloop, CollectiveEpilogue, int(NumMmaThreads)>(
        storage, params.mainloop.tma_transaction_bytes, params.epilogue, isMainloopProducer, isEpilogueProducer,
        isMath, warp_group_thread_idx);
  }

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

    if (sync.triggerDependentsAtStart) triggerDependentLaunch();

    if (thread_idx == 0) {
      if (sync.trace != nullptr) shared_storage.traceStart = detail::globalTimerNs();
      // The ticket also fixes the tile order; in hardware order the unit is the one this block's index names. A
      // stage that neither posts nor waits, unsplit (split-K arrivals count by iteration), takes no ticket at all.
      const bool needsTicket = sync.a.input.synchronized() || sync.stage.countsStartedBlocks();
      if constexpr (kClusterRows > 1) {
        // The block's own place in the cluster order: its cluster's unit, its row of the cluster tile.
        WorkUnit unit = sync.stage.clusterUnitAt(blockIdx.x);
        if (needsTicket) unit.ticket.iteration = sync.stage.acquireIteration();
        shared_storage.unit = unit;
      } else {
        // The unit the block's index names costs integer divisions before the ticket's round trip: only hardware
        // order reads it.
        const WorkUnit hardware =
            sync.stage.hardwareOrder ? sync.stage.hardwareUnit(blockIdx.x) : WorkUnit{TileTicket{TileCoord{}, 0u}, 0u};
        shared_storage.unit = needsTicket ? sync.stage.acquireWorkUnit(hardware.ticket.tile, hardware.part)
                                          : sync.stage.unsynchronizedWorkUnit(blockIdx.x);
      }
    }
    if (warp_idx == 0 && cute::elect_one_sync()) {
      CollectiveMainloop::prefetch_tma_descriptors(params.mainloop);
      CollectiveEpilogue::prefetch_tma_descriptors(params.epilogue);
    }

    const bool isMainloopProducer =
        warp_group_role == WarpGroupRole::Producer && producer_warp_role == ProducerWarpRole::Mainloop;
    const bool isEpilogueProducer =
        warp_group_role == WarpGroupRole::Producer && producer_warp_role == ProducerWarpRole::Epilogue;
    auto [mainloop_pipeline, epi_load_pipeline, epi_store_pipeline] =
        makePipelines(shared_storage.pipelines, params, isMainloopProducer, isEpilogueProducer,
                      warp_group_role != WarpGroupRole::Producer, warp_group_thread_idx);

    typename CollectiveMainloop::PipelineState mainloop_pipe_consumer_state;
    typename CollectiveEpilogue::LoadPipelineState epi_load_pipe_consumer_state;
    auto mainloop_pipe_producer_state = cutlass::make_producer_start_state<MainloopPipeline>();
    auto epi_load_pipe_producer_state = cutlass::make_producer_start_state<EpiLoadPipeline>();
    auto epi_store_pipe_producer_state = cutlass::make_producer_start_state<EpiStorePipeline>();

    // Makes the pipeline initialization and the ticket visible to every thread, and in a cluster the barriers to the
    // peer, whose multicast copies complete on them and whose math warps release this block's stages.
    if constexpr (kClusterRows > 1) {
      cute::cluster_arrive();
      cute::cluster_wait();
    } else {
      __syncthreads();
    }
    const std::uint32_t clusterRank = kClusterRows > 1 ? cute::block_rank_in_cluster() : 0u;
    const TileTicket ticket = shared_storage.unit.ticket;
    const std::uint32_t part = shared_storage.unit.part;
    const std::uint32_t parts = shared_storage.unit.parts;

    auto problem_shape_MNKL = params.problem_shape;
    auto blk_shape = TileShape{};
    TiledMma tiled_mma;
    CollectiveMainloop collective_mainloop;
    auto load_inputs = collective_mainloop.load_init(problem_shape_MNKL, params.mainloop);
    Tensor gA_mkl = get<0>(load_inputs);
    // This part's k-range: a balanced split, so every part has at least one k-block when parts <= k-blocks.
    const int k_tiles_total = size<3>(gA_mkl);
    const KBlockRange kRange = kBlocksOfPart(part, parts, k_tiles_total);
    // Uniform to the compiler (warp_uniform.cuh): else the MMA loop moves every wgmma descriptor through R2UR.
    const int k_tile_begin = warpUniform(kRange.begin);
    const int k_tile_count = warpUniform(kRange.count);
    auto blk_coord = make_coord(int(ticket.tile.y), int(ticket.tile.x), _, int(ticket.tile.z));

    if (warp_group_role == WarpGroupRole::Producer) {
      cutlass::arch::warpgroup_reg_dealloc<LoadRegisterRequirement>();
      if (producer_warp_role == ProducerWarpRole::Mainloop) {
        auto k_tile_iter = cute::make_coord_iterator(idx2crd(k_tile_begin, shape<3>(gA_mkl)), shape<3>(gA_mkl));
        // The whole warp looks at every producer tile the tile reads first (TileSyncMainloop::lookAtProducedA); the
        // load thread then checks nothing at the k-blocks whose tiles it found posted.
        const std::uint32_t knownPostedEnd =
            CollectiveMainloop::lookAtProducedA(sync.a, int(ticket.tile.y), k_tile_begin, k_tile_count, ticket);
        collective_mainloop.loadSynchronized(params.mainloop, mainloop_pipeline, mainloop_pipe_producer_state,
                                             load_inputs, blk_coord, k_tile_iter, k_tile_count,
                                             shared_storage.tensors.mainloop, sync.a, sync.loadOrder, ticket,
                                             sync.stage, knownPostedEnd, clusterRank);
        mainloop_pipe_producer_state.advance(k_tile_count);
        collective_mainloop.load_tail(mainloop_pipeline, mainloop_pipe_producer_state);
      } else if (producer_warp_role == ProducerWarpRole::Epilogue) {
        CollectiveEpilogue collective_epilogue(params.epilogue, shared_storage.tensors.epilogue);
        if (collective_epilogue.is_producer_load_needed()) {
          epi_load_pipe_producer_state =
              collective_epilogue.load(epi_load_pipeline, epi_load_pipe_producer_state, problem_shape_MNKL,
                                       blk_shape, blk_coord, tiled_mma, cutlass::canonical_lane_idx(),
                                       shared_storage.tensors.epilogue);
          collective_epilogue.load_tail(epi_load_pipeline, epi_load_pipe_producer_state);
        }
      }
    } else {
      cutlass::arch::warpgroup_reg_alloc<MmaRegisterRequirement>();
      CollectiveEpilogue collective_epilogue(params.epilogue, shared_storage.tensors.epilogue);
      auto accumulators = partition_fragment_C(tiled_mma, take<0, 2>(blk_shape));
      collective_mainloop.mma(mainloop_pipeline, mainloop_pipe_consumer_state, accumulators, k_tile_count,
                              mma_thread_idx, shared_storage.tensors.mainloop, params.mainloop);
      collective_mainloop.mma_tail(mainloop_pipeline, mainloop_pipe_consumer_state, k_tile_count);
      const std::uint64_t traceMmaDone = sync.trace != nullptr ? detail::globalTimerNs() : 0;
      auto recordTrace = [&] {
        if (sync.trace != nullptr && mma_thread_idx == 0)
          recordBlockTrace(sync.trace, sync.traceStage, ticket.tile.x, shared_storage.traceStart, traceMmaDone,
                           ticket.tile.y, part);
      };
      meetBeforeEpilogue();
      if (parts > 1 && !reduceSplitPartials(sync, ticket.tile, part, parts, accumulators, mma_thread_idx,
                                            shared_storage.lastArrival, get<0>(problem_shape_MNKL))) {
        recordTrace();
        return;  // another part of this tile arrives later and finishes it
      }
      auto [epi_load_next, epi_store_next] = collective_epilogue.store(
          epi_load_pipeline, epi_load_pipe_consumer_state, epi_store_pipeline, epi_store_pipe_producer_state,
          problem_shape_MNKL, blk_shape, blk_coord, accumulators, tiled_mma, mma_thread_idx,
          shared_storage.tensors.epilogue);
      collective_epilogue.store_tail(epi_load_pipeline, epi_load_next, epi_store_pipeline, epi_store_next);

      postStoredTile<OutputPolicy, int(NumMmaThreads)>(sync.stage, ticket.tile, mma_thread_idx);
      recordTrace();
    }
#else
    printf("cusync TileSyncGemmKernel requires sm_90a\n");
#endif
  }

  // The epilogue's shared memory is the mainloop's (the union above), and mma() waits only for the calling warp
  // group's own wgmma: a warp group that finished its k-blocks could write epilogue staging data over stages the other
  // one's last wgmma still reads (it may trail by up to the pipeline's depth). So the math warp groups meet first.
  // Found by compute-sanitizer, which slows warps unevenly: unsplit tiles came out wrong under every tool, split ones
  // (whose reduction has a barrier here) right (docs/BENCHMARKS.md, issue 14, session 14 call 7).
  CUTLASS_DEVICE static void meetBeforeEpilogue() {
    if constexpr (NumMmaWarpGroups > 1)
      cutlass::arch::NamedBarrier::sync(NumMmaThreads, cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
  }

  // Split-K by last arrival (split_k_reduction.hpp), shared with the persistent and the fused-chain kernels.
  // `MaySumInL2` false: a kernel that never sums its parts in L2 (the lean persistent GEMM, whose can_implement
  // refuses sync.splitAccumulate) compiles only the deterministic read, not both.
  template <bool MaySumInL2 = true, class Accumulators>
  CUTLASS_DEVICE static bool reduceSplitPartials(GemmStageSync<InputPolicy> const& sync, TileCoord tile,
                                                 std::uint32_t part, std::uint32_t parts, Accumulators& accumulators,
                                                 int mma_thread_idx, std::uint32_t& lastArrival, int problemM) {
    const int rowsInTile = problemM - int(tile.y) * int(cute::size<0>(TileShape{}));
    return cutlass_sm90::reduceSplitPartials<TiledMma, TileShape, int(NumMmaThreads)>(
        SplitKBuffers{sync.splitPartials, sync.splitArrivals, sync.stage.partialSlotsPerTile(parts),
                      MaySumInL2 && sync.splitAccumulate},
        linearIndex(tile, sync.stage.grid), part, parts,
        accumulators, mma_thread_idx, lastArrival, rowsInTile);
  }
};

// The __global__ entry point. Params hold TMA descriptors, which must live in kernel parameter space.
template <class Kernel>
__global__ void __launch_bounds__(Kernel::MaxThreadsPerBlock, Kernel::MinBlocksPerSm)
    tileSyncGemmEntry(CUTLASS_GRID_CONSTANT typename Kernel::Params const params) {
  extern __shared__ char smem[];
  Kernel{}(params, smem);
}

}  // namespace CUSYNC_LOAD_ORDER_NAMESPACE
}  // namespace cusync::cutlass_sm90
