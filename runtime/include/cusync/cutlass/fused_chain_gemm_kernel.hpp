// Two dependent GEMMs in one persistent launch: D0 = epilogue0(A0 * B0), then D1 = epilogue1(D0 * B1), their work
// units drawn by every block from one chain queue (chain_queue.cuh). Device code; needs CUTLASS.
//
// Why: two launches each pay a partial last wave, a ramp-up and a ramp-down, and the second cannot use the SMs the
// first leaves idle at its end. Here a block that finishes its last unit of GEMM 0 takes a unit of GEMM 1 at once;
// GEMM 1's units wait, tile by tile and k-block by k-block, only for the GEMM-0 tiles they read (the chain's
// policy, proven by cusyncgen). With GEMM 1 split along K and its units queued k-range by k-range, its first units
// need only the GEMM-0 columns that finish first, so the two GEMMs pipeline even when GEMM 0 has a single row of
// tiles (small M).
//
// The body is the persistent kernel's (tile_sync_persistent_gemm_kernel.hpp): the TMA producer warp draws a unit,
// waits for the A k-blocks it reads (after issuing the weights first, LoadOrder::WeightsFirst) and hands the unit to
// the math warp groups through a shared-memory pipeline of units; the math warp groups run CUTLASS's MMA, reduce
// split-K partials by last arrival, run the unit's stage's epilogue, complete the bulk stores and post. The GEMMs
// share the stage buffers in shared memory and, unless their stage counts differ, one mainloop pipeline (stages,
// barriers). They may have their own tile widths: GEMM 1's collective may tile N differently from GEMM 0's (same
// TileM and cluster), because one tile shape cannot make whole waves of both GEMMs (LLaMA at M = 512: GEMM 0 wants
// 176 columns, GEMM 1 256; docs/BENCHMARKS.md, session 7). With one pipeline the stages of both are as many as the
// wider GEMM's stage buffers allow, and a narrower GEMM 0 then streams with fewer than it could (GPT-3 M = 256,
// 128x96 | 192: GEMM 0 took 73 us at 5 stages, 65 at 6; session 20). Two ways out: GEMM 1 at half the k-block depth
// (its own TileK; tried, GEMM 1 lost as much at 32-deep k-blocks), or a stage count per GEMM, each GEMM then on a
// pipeline of its own over the shared buffers (kTwoPipelines; 8% faster there). With one pipeline, the wider GEMM's
// units add their extra bytes to each stage's barrier. Either way a block drains its loads once, when it turns from
// GEMM 0's units to GEMM 1's, because the two collectives' stage buffers overlap differently.
// GEMM 0's epilogue may combine columns: the paired SwiGLU (paired_glu_epilogue.hpp) turns a TileN-wide
// [gate | up] tile into TileN/2 columns of GEMM 1's A, so the LLaMA MLP is a two-stage chain too. The two epilogues
// share shared memory: a block's units come in ticket order, so it switches from GEMM 0 to GEMM 1 once, after
// completing all its GEMM-0 stores.
// With staged epilogues (staged_tile_epilogue.hpp; both GEMMs' or neither) the math warps only stage each tile in
// shared memory as fp16, and the producer warp group's warps 1-3 apply the activation, store and post it while the
// math warps run the next unit. Correct and stressed, but on the H100 it won no M (docs/BENCHMARKS.md, session 11).
#pragma once

#include <type_traits>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/gemm.h>
#include <cutlass/pipeline/pipeline.hpp>

#include "cusync/chain_queue.cuh"
#include "cusync/chain_trace.h"
#include "cusync/cutlass/cluster_unit_channel.hpp"
#include "cusync/cutlass/kernel_pipelines.hpp"
#include "cusync/cutlass/load_order_namespace.hpp"
#include "cusync/cutlass/split_k_reduction.hpp"
#include "cusync/cutlass/staged_tile_epilogue.hpp"
#include "cusync/cutlass/tile_sync_mainloop.hpp"
#include "cusync/cutlass/tile_post.hpp"
#include "cusync/split_k_range.h"
#include "cusync/stage_view.cuh"
#include "cusync/stress_delay.cuh"
#include "cusync/warp_uniform.cuh"

// Stress testing (stress_delay.cuh): each unit is delayed by a pseudo-random time in the load warp before its first
// wait (a slow consumer, or a producer unit whose tiles arrive late) and in the math warps before the post (a slow
// producer), when the translation unit defines CUSYNC_CHAIN_DELAY_NS.

namespace cusync::cutlass_sm90 {

namespace detail {
// `first` for GEMM 0, `second` for GEMM 1: a reference to one of two objects of different types.
template <int kStage, class First, class Second>
CUTLASS_DEVICE decltype(auto) ofStage(First& first, Second& second) {
  if constexpr (kStage == 0)
    return (first);
  else
    return (second);
}

// How many GEMM columns make one output column: CUTLASS's epilogues write every column (1); an epilogue that
// combines columns says so with OutputColumnsDivisor.
template <class Epilogue, class = void>
struct OutputColumnsDivisor {
  static constexpr int value = 1;
};
template <class Epilogue>
struct OutputColumnsDivisor<Epilogue, std::void_t<decltype(Epilogue::OutputColumnsDivisor)>> {
  static constexpr int value = Epilogue::OutputColumnsDivisor;
};

// Null when the epilogue can store the problem's tiles: CUTLASS's can_implement, or the epilogue's own reason.
template <class Epilogue, class ProblemShape, class Arguments>
const char* whyEpilogueCannotStore(ProblemShape const& problem, Arguments const& args) {
  if constexpr (OutputColumnsDivisor<Epilogue>::value != 1 || IsStagedEpilogue<Epilogue>::value)
    return Epilogue::why_not_implementable(problem, args);
  else
    return Epilogue::can_implement(problem, args) ? nullptr : "CUTLASS cannot implement GEMM 0's epilogue";
}

}  // namespace detail

inline namespace CUSYNC_LOAD_ORDER_NAMESPACE {

template <class CollectiveMainloop_, class EpilogueFirst_, class EpilogueSecond_, class Policy_,
          class CollectiveMainloopSecond_ = CollectiveMainloop_>
class FusedChainGemmKernel {
 public:
  using CollectiveMainloop = TileSyncMainloop<CollectiveMainloop_>;              // GEMM 0's
  using CollectiveMainloopSecond = TileSyncMainloop<CollectiveMainloopSecond_>;  // GEMM 1's
  using EpilogueFirst = EpilogueFirst_;    // GEMM 0's epilogue: a CUTLASS one (e.g. GELU) or the paired SwiGLU
  using EpilogueSecond = EpilogueSecond_;  // GEMM 1's epilogue (its tile shape is GEMM 1's)
  using Policy = Policy_;                  // GEMM 0 posts and GEMM 1 waits under it
  using TileShape = typename CollectiveMainloop::TileShape;              // GEMM 0's
  using TileShapeSecond = typename CollectiveMainloopSecond::TileShape;  // GEMM 1's
  using TiledMma = typename CollectiveMainloop::TiledMma;
  using ClusterShape = typename CollectiveMainloop::DispatchPolicy::ClusterShape;
  static constexpr bool kOneTileShape = cute::is_same_v<CollectiveMainloop_, CollectiveMainloopSecond_>;
  // What the two GEMMs share: rows per tile (GEMM 1 reads GEMM 0's rows), the cluster, the math threads and, unless
  // their stage counts differ (kTwoPipelines), the pipeline. Each counts k-blocks of its own depth (kFirstTileK,
  // kSecondTileK).
  static_assert(cute::size<0>(TileShape{}) == cute::size<0>(TileShapeSecond{}),
                "the GEMMs' tiles may differ in N and K only");
  static_assert(cute::is_same_v<ClusterShape, typename CollectiveMainloopSecond::DispatchPolicy::ClusterShape> &&
                    cute::size(TiledMma{}) == cute::size(typename CollectiveMainloopSecond::TiledMma{}),
                "the GEMMs share one cluster and set of math threads");
  // GEMMs with different stage counts (fused_chain_instance.cuh's SecondStages): each its own pipeline, barriers and
  // states over the stage buffers they share. Why: the stages of one shared pipeline are as many as the wider GEMM's
  // stage buffers allow, and a narrower GEMM 0 then streams with fewer than it could (GPT-3 M = 256, 128x96 | 192:
  // GEMM 0 took 73 us at 5 stages, 65 at 6; docs/BENCHMARKS.md, session 20). A block's units come in ticket order,
  // GEMM 0's before GEMM 1's, so its loads turn from one pipeline to the other once, after draining the first
  // (below); the second pipeline's barriers are untouched until then.
  static constexpr bool kTwoPipelines = !cute::is_same_v<typename CollectiveMainloop::MainloopPipeline,
                                                         typename CollectiveMainloopSecond::MainloopPipeline>;
  using ProblemShape = cute::Shape<int, int, int, int>;  // M, N, K, L
  // Clusters of 1 or 2 blocks along M: a queue unit is then the tiles (x, 2y') and (x, 2y' + 1) of one k-range,
  // drawn once for the cluster (rank 0) and handed to rank 1 (cluster_unit_channel.hpp); the two blocks share each
  // B tile through TMA multicast (TileSyncMainloop::loadSynchronized).
  // Validated on the H100 in session 5 (mlp_fused_stress's cluster chain: 19,200 executions, all correct) after the
  // unit pipeline's releases were sent to the releasing block's own barrier (dst_blockid, below).
  static constexpr std::uint32_t kClusterRows = cute::size<0>(ClusterShape{});
  // Each GEMM's k-block depth: GEMM 0's TileK, GEMM 1's own (scalars, passed by value: device code cannot
  // take a static member's address).
  static constexpr int kFirstTileK = int(cute::size<2>(TileShape{}));
  static constexpr int kSecondTileK = int(cute::size<2>(TileShapeSecond{}));
  static_assert(cute::size<1>(ClusterShape{}) == 1 && cute::size<2>(ClusterShape{}) == 1 &&
                    (kClusterRows == 1 || kClusterRows == 2),
                "the fused chain runs single blocks or 2x1 clusters");
  // The math warps run either epilogue with one set of pipeline states, and no warp loads C.
  static_assert(cute::is_same_v<typename EpilogueFirst::StorePipeline, typename EpilogueSecond::StorePipeline>);
  // Neither epilogue loads C, but each needs a C-load pipeline of its own type: one serves both where they agree.
  static constexpr bool kOneEpilogueLoadPipeline =
      cute::is_same_v<typename EpilogueFirst::LoadPipeline, typename EpilogueSecond::LoadPipeline>;
  struct NoStorage {};
  // Staged epilogues (staged_tile_epilogue.hpp): the math warps hand each unit's tile to the producer warp group's
  // warps 1-3, which run the activation, the stores and the post while the math warps run the next unit.
  static constexpr bool kStagedEpilogue = IsStagedEpilogue<EpilogueFirst>::value;
  static_assert(kStagedEpilogue == IsStagedEpilogue<EpilogueSecond>::value, "both epilogues staged, or neither");
  static constexpr int kMaxTileColumns = cute::size<1>(TileShape{}) > cute::size<1>(TileShapeSecond{})
                                             ? int(cute::size<1>(TileShape{}))
                                             : int(cute::size<1>(TileShapeSecond{}));
  using StagedStorage = cute::conditional_t<kStagedEpilogue,
                                            StagedTileStorage<int(cute::size<0>(TileShape{})), kMaxTileColumns>,
                                            NoStorage>;
  static_assert(cute::is_void_v<typename EpilogueFirst::ElementC> && cute::is_void_v<typename EpilogueSecond::ElementC>,
                "the fused chain reads no C operand");

  static constexpr int MinBlocksPerSm = 1;
  static constexpr std::uint32_t NumLoadWarpGroups = 1;
  static constexpr std::uint32_t NumMmaThreads = cute::size(TiledMma{});
  static constexpr std::uint32_t MaxThreadsPerBlock = NumMmaThreads + NumLoadWarpGroups * cutlass::NumThreadsPerWarpGroup;
  // With staged epilogues, the producer warp group's warps 1-3 hold a few staged chunks each: the math warp groups
  // give up 8 registers of their 232 for them where there are two (the block's 384 x 168 registers at launch).
  static constexpr std::uint32_t LoadRegisterRequirement =
      !kStagedEpilogue ? 40 : NumMmaThreads > cutlass::NumThreadsPerWarpGroup ? 56 : 64;
  static constexpr std::uint32_t MmaRegisterRequirement =
      kStagedEpilogue && NumMmaThreads > cutlass::NumThreadsPerWarpGroup ? 224 : 232;
  static constexpr int kStages = 2;  // GEMM 0 and GEMM 1
  // Columns GEMM 0's epilogue writes per tile column: 1, or 2 for the paired SwiGLU (paired_glu_epilogue.hpp),
  // whose TileN-wide tile yields TileN/2 columns of GEMM 1's A.
  static constexpr int kFirstOutputColumnsDivisor = detail::OutputColumnsDivisor<EpilogueFirst>::value;

  static constexpr int kWorkUnitStages = 2;  // units the load warp may draw ahead of the math warps
  using WorkUnitPipeline = cutlass::PipelineAsync<kWorkUnitStages>;
  using UnitChannel = ClusterUnitChannel<kWorkUnitStages>;
  using MainloopPipeline = typename CollectiveMainloop::MainloopPipeline;
  using MainloopPipelineSecond = typename CollectiveMainloopSecond::MainloopPipeline;  // the same type unless
                                                                                      // kTwoPipelines
  using EpiLoadPipeline = typename EpilogueSecond::LoadPipeline;
  using EpiStorePipeline = typename EpilogueFirst::StorePipeline;

  struct SharedStorage {
    struct TensorStorage : cute::aligned_struct<128, cute::_1> {
      union EpilogueStorage {
        typename EpilogueFirst::TensorStorage first;
        typename EpilogueSecond::TensorStorage second;
      } epilogue;
      // Each GEMM's stage buffers (the same storage when the tiles agree); see the drain in operator().
      union MainloopStorage {
        typename CollectiveMainloop::TensorStorage first;
        typename CollectiveMainloopSecond::TensorStorage second;
      } mainloop;
      StagedStorage staged;
    } tensors;
    struct PipelineStorage : cute::aligned_struct<16, cute::_1> {
      alignas(16) typename CollectiveMainloop::PipelineStorage mainloop;
      alignas(16) cute::conditional_t<kTwoPipelines, typename CollectiveMainloopSecond::PipelineStorage, NoStorage>
          mainloop_second;
      alignas(16) typename EpilogueSecond::PipelineStorage epi_load;
      alignas(16) cute::conditional_t<kOneEpilogueLoadPipeline, NoStorage, typename EpilogueFirst::PipelineStorage>
          epi_load_first;
      alignas(16) typename WorkUnitPipeline::SharedStorage workUnits;
    } pipelines;
    ChainUnit units[kWorkUnitStages];
    typename UnitChannel::SharedStorage clusterUnits;  // used by 2x1 clusters only
    std::uint32_t lastArrival;
  };
  static constexpr int SharedStorageSize = sizeof(SharedStorage);

  // What one GEMM of the chain computes and how it synchronizes.
  template <class Mainloop, class Epilogue>
  struct GemmArguments {
    ProblemShape problem_shape;
    typename Mainloop::Arguments mainloop;
    typename Epilogue::Arguments epilogue;
    SplitKBuffers split;  // when the stage's blocksPerTile > 1
  };
  template <class Mainloop, class Epilogue>
  struct GemmParams {
    ProblemShape problem_shape;
    typename Mainloop::Params mainloop;
    typename Epilogue::Params epilogue;
    SplitKBuffers split;
  };

  struct Arguments {
    GemmArguments<CollectiveMainloop, EpilogueFirst> first;
    GemmArguments<CollectiveMainloopSecond, EpilogueSecond> second;
    // stages[0] posts GEMM 0's tiles (its semaphores; null when nobody waits); stages[1] is GEMM 1's. Their grids,
    // tile orders and parts per tile define the units; their own tile counters are not used (the queue's is).
    StageView stages[kStages];
    ChainQueueView queue;
    // Where GEMM 1's A (= D0) comes from: GEMM 0's semaphores and tile shape; unsynchronized when the input is
    // null (a launch whose queue holds GEMM 1 only, after a stream-ordered launch of GEMM 0).
    ProducedOperandA<Policy> firstOutput;
    LoadOrder loadOrder = LoadOrder::WeightsFirst;
    ChainUnitTrace* trace = nullptr;  // one record per queue index (chain_trace.h); null: no trace
    // A GEMM-1 unit whose GEMM-0 tiles are not all posted when it is drawn: false, wait k-block by k-block (its
    // first k-blocks start as soon as their tiles are posted); true, the load warp waits for the whole k-range first
    // (warpWaitPostedColumns), then loads without further checks. Both sound; which is faster depends on whether
    // GEMM 0's rows finish column by column or all at once (a single wave).
    bool waitForWholeUnit = false;
  };

  struct Params {
    GemmParams<CollectiveMainloop, EpilogueFirst> first;
    GemmParams<CollectiveMainloopSecond, EpilogueSecond> second;
    StageView stages[kStages];
    ChainQueueView queue;
    ProducedOperandA<Policy> firstOutput;
    LoadOrder loadOrder;
    ChainUnitTrace* trace;
    bool waitForWholeUnit;
  };

  template <class Mainloop, class Epilogue>
  static GemmParams<Mainloop, Epilogue> toParams(GemmArguments<Mainloop, Epilogue> const& g) {
    return GemmParams<Mainloop, Epilogue>{g.problem_shape,
                                          Mainloop::to_underlying_arguments(g.problem_shape, g.mainloop, nullptr),
                                          Epilogue::to_underlying_arguments(g.problem_shape, g.epilogue, nullptr),
                                          g.split};
  }

  static Params to_underlying_arguments(Arguments const& args) {
    return Params{toParams(args.first),
                  toParams(args.second),
                  {args.stages[0], args.stages[1]},
                  args.queue,
                  args.firstOutput,
                  args.loadOrder,
                  args.trace,
                  args.waitForWholeUnit};
  }

  // The stage grid of GEMM 0 (tileGrid) and of GEMM 1 (secondTileGrid): x = N tiles, y = M tiles, z = L, as the
  // specs' Grid(x, y).
  template <class Shape = TileShape>
  static GridShape tileGrid(ProblemShape const& problem) {
    return GridShape{static_cast<std::uint32_t>(cute::ceil_div(cute::get<1>(problem), cute::size<1>(Shape{}))),
                     static_cast<std::uint32_t>(cute::ceil_div(cute::get<0>(problem), cute::size<0>(Shape{}))),
                     static_cast<std::uint32_t>(cute::get<3>(problem))};
  }
  static GridShape secondTileGrid(ProblemShape const& problem) { return tileGrid<TileShapeSecond>(problem); }

  // What makes a launch invalid is refused here, not by the caller: CUTLASS's own limits, grids that do not match
  // the problems, a queue that is not a chain of these two stages, split-K without buffers or with more parts than
  // k-blocks, and GEMM 1 reading GEMM 0's output with a different shape than GEMM 0 writes.
  static const char* why_not_implementable(Arguments const& args) {
    if (!CollectiveMainloop::can_implement(args.first.problem_shape, args.first.mainloop) ||
        !CollectiveMainloopSecond::can_implement(args.second.problem_shape, args.second.mainloop))
      return "CUTLASS cannot implement one of the two problems";
    if (const char* why = detail::whyEpilogueCannotStore<EpilogueFirst>(args.first.problem_shape, args.first.epilogue))
      return why;
    if (const char* why =
            detail::whyEpilogueCannotStore<EpilogueSecond>(args.second.problem_shape, args.second.epilogue))
      return why;
    if (!(tileGrid(args.first.problem_shape) == args.stages[0].grid) ||
        !(secondTileGrid(args.second.problem_shape) == args.stages[1].grid))
      return "a stage grid does not match its GEMM's tile grid";
    if (args.stages[0].streamKChunks != 0 || args.stages[1].streamKChunks != 0)
      return "the fused chain's queue runs no stream-K chunks";
    if (cute::get<0>(args.first.problem_shape) != cute::get<0>(args.second.problem_shape) ||
        cute::get<1>(args.first.problem_shape) / kFirstOutputColumnsDivisor != cute::get<2>(args.second.problem_shape))
      return "GEMM 1's A is not GEMM 0's output (M must match, and GEMM 1's K must be the columns GEMM 0 writes: its N, "
             "or N/2 after a paired gate/up epilogue)";
    if (args.queue.ticketCounter == nullptr || args.queue.persistentBlocks == 0)
      return "the chain queue needs a ticket counter and its persistent block count";
    if (args.queue.clusterRows != kClusterRows)
      return "the chain queue is drawn by clusters of another size than this kernel's (ClusterShape along M)";
    if (args.queue.stageCount != kStages) return "the chain queue must list both GEMMs (a GEMM may have no units)";
    const std::uint32_t unitsFirst = args.queue.firstTicket[1] - args.queue.firstTicket[0];
    const std::uint32_t unitsSecond = args.queue.firstTicket[2] - args.queue.firstTicket[1];
    auto queueUnits = [](StageView const& v) {
      return clusterGrid(v.grid, kClusterRows).tileCount() * v.blocksPerTile;
    };
    if (args.queue.firstTicket[0] != 0 ||
        (unitsFirst != 0 && unitsFirst != queueUnits(args.stages[0])) ||
        (unitsSecond != 0 && unitsSecond != queueUnits(args.stages[1])))
      return "the chain queue's units do not match the stages' work units";
    if (args.firstOutput.input.producerSemaphores != nullptr &&
        (args.firstOutput.producerTileRows != cute::size<0>(TileShape{}) ||
         args.firstOutput.producerTileColumns != cute::size<1>(TileShape{}) / kFirstOutputColumnsDivisor ||
         !(args.firstOutput.input.producerGrid == args.stages[0].grid)))
      return "GEMM 1 waits on GEMM 0 with another tile shape or grid than GEMM 0 has";
    if (args.firstOutput.input.producerSemaphores != nullptr && unitsFirst != 0 && unitsSecond != 0 &&
        args.stages[0].semaphores != args.firstOutput.input.producerSemaphores)
      return "GEMM 1 waits on other semaphores than GEMM 0 posts to";
    if (args.stages[1].semaphores != nullptr)
      return "GEMM 1 posts nothing here (it is the last stage of the chain): its stage must have no semaphores";
    const int kBlocks[kStages] = {int(cute::ceil_div(cute::get<2>(args.first.problem_shape), int(kFirstTileK))),
                                  int(cute::ceil_div(cute::get<2>(args.second.problem_shape), int(kSecondTileK)))};
    const SplitKBuffers splits[kStages] = {args.first.split, args.second.split};
    for (int s = 0; s < kStages; ++s) {
      if (args.stages[s].blocksPerTile > 1 && (splits[s].partials == nullptr || splits[s].arrivals == nullptr))
        return "split-K needs partial and arrival buffers";
      if (int(args.stages[s].blocksPerTile) > kBlocks[s]) return "more split-K parts than k-blocks";
      if (args.stages[s].wholeTiles != 0) return "a fused chain splits every tile of a stage or none (whole tiles)";
    }
    return nullptr;
  }
  static bool can_implement(Arguments const& args) { return why_not_implementable(args) == nullptr; }

  // Bytes TMA brings per k-block: each GEMM's, and the fewer of the two, which the shared pipeline's barriers expect
  // (a unit of the other GEMM adds its extra bytes, TileSyncMainloop::loadSynchronized).
  static constexpr std::uint32_t kBytesPerKBlock[kStages] = {CollectiveMainloop::TmaTransactionBytes,
                                                             CollectiveMainloopSecond::TmaTransactionBytes};
  static constexpr std::uint32_t kPipelineBytesPerKBlock =
      kTwoPipelines || kBytesPerKBlock[0] < kBytesPerKBlock[1] ? kBytesPerKBlock[0] : kBytesPerKBlock[1];
  // What each GEMM's units add to a stage's barrier beyond what its pipeline expects (none with two pipelines).
  static constexpr std::uint32_t kExtraBytesFirst = kBytesPerKBlock[0] - kPipelineBytesPerKBlock;
  static constexpr std::uint32_t kExtraBytesSecond = kTwoPipelines ? 0u : kBytesPerKBlock[1] - kPipelineBytesPerKBlock;

  // The pipelines of the warp roles (kernel_pipelines.hpp); no warp loads C. Built from GEMM 1's epilogue, always a
  // CUTLASS one (GEMM 0's may be the paired SwiGLU, which only borrows the pipeline types).
  template <class PipelineStorage>
  CUTLASS_DEVICE static auto makePipelines(PipelineStorage& storage, Params const& params, bool isMainloopProducer,
                                           bool isMath, int warp_group_thread_idx) {
    return makeKernelPipelines<CollectiveMainloop, EpilogueSecond, int(NumMmaThreads)>(
        storage, kPipelineBytesPerKBlock, params.second.epilogue, isMainloopProducer,
        /*isEpilogueProducer=*/false, isMath, warp_group_thread_idx);
  }

  // The staged epilogue's warps (`thread` in [0, kStagedEpilogueThreads)): each tile the math warps stage, stored
  // with its GEMM's activation, then posted when a later unit may wait for it. The post follows the stores of all
  // epilogue threads (their barrier) and a gpu-scope fence, as the one-tile kernels' release after plain stores; a
  // consumer's TMA reads the tile after its acquire and its own proxy fence (producer_range_wait.cuh).
  CUTLASS_DEVICE static void runStagedEpilogue(Params const& params, StagedStorage& staged, int thread,
                                               std::uint32_t clusterRank) {
    for (std::uint32_t received = 0;; ++received) {
      detail::stagedWait(staged.full, received & 1u);
      const StagedUnit unit = staged.unit;
      if (unit.stage == StagedUnit::kNoMoreUnits) return;
      if (unit.stage == 0)
        EpilogueFirst::storeTile(params.first.epilogue, cute::get<0>(params.first.problem_shape),
                                 cute::get<1>(params.first.problem_shape), unit.tile, staged.chunks, thread);
      else
        EpilogueSecond::storeTile(params.second.epilogue, cute::get<0>(params.second.problem_shape),
                                  cute::get<1>(params.second.problem_shape), unit.tile, staged.chunks, thread);
      detail::stagedArrive(staged.empty);
      const StageView& stage = params.stages[unit.stage];
      if (stage.semaphores != nullptr) {
        cutlass::arch::NamedBarrier::sync(kStagedEpilogueThreads, kStagedEpilogueBarrier);
        if (thread == 0) {
          CUSYNC_CHAIN_DELAY(unit.tile.x * 31u + unit.tile.y * 131u + unit.stage * 7u);
          __threadfence();
          stage.template postThread<Policy>(unit.tile);
        }
      }
      if (params.trace != nullptr && clusterRank == 0 && thread == 0)
        params.trace[unit.queueIndex].done = ::cusync::detail::globalTimerNs();
    }
  }

  CUTLASS_DEVICE void operator()(Params const& params, char* smem_buf) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace cute;
    enum class WarpGroupRole { Producer = 0, Consumer0 = 1, Consumer1 = 2 };

    // Traced launches only: when this block began, so that the trace also shows the dispatch and the prologue.
    const std::uint64_t blockEntered = params.trace != nullptr ? ::cusync::detail::globalTimerNs() : 0;
    SharedStorage& shared_storage = *reinterpret_cast<SharedStorage*>(smem_buf);
    const int thread_idx = int(threadIdx.x);
    const int warp_idx = cutlass::canonical_warp_idx_sync();
    const int warp_group_thread_idx = thread_idx % cutlass::NumThreadsPerWarpGroup;
    const int mma_thread_idx = thread_idx % NumMmaThreads;
    const auto warp_group_role = WarpGroupRole(cutlass::canonical_warp_group_idx());
    const bool isMainloopProducer = warp_group_role == WarpGroupRole::Producer && warp_idx % 4 == 0;
    const bool isMath = warp_group_role != WarpGroupRole::Producer;

    if (warp_idx == 0 && cute::elect_one_sync()) {
      CollectiveMainloop::prefetch_tma_descriptors(params.first.mainloop);
      CollectiveMainloopSecond::prefetch_tma_descriptors(params.second.mainloop);
      EpilogueFirst::prefetch_tma_descriptors(params.first.epilogue);
      EpilogueSecond::prefetch_tma_descriptors(params.second.epilogue);
    }
    auto pipelines = makePipelines(shared_storage.pipelines, params, isMainloopProducer, isMath, warp_group_thread_idx);
    auto& mainloop_pipeline = pipelines.mainloop;
    // GEMM 1's: its own with kTwoPipelines, else the same object.
    auto mainloop_pipeline_second_own = [&]() {
      if constexpr (kTwoPipelines)
        return makeMainloopPipeline<CollectiveMainloopSecond, int(NumMmaThreads)>(
            shared_storage.pipelines.mainloop_second, kBytesPerKBlock[1], isMainloopProducer, isMath,
            warp_group_thread_idx);
      else
        return NoStorage{};
    }();
    auto& mainloop_pipeline_second =
        detail::ofStage<kTwoPipelines ? 1 : 0>(mainloop_pipeline, mainloop_pipeline_second_own);
    auto& epi_load_pipeline = pipelines.epiLoad;
    auto epi_load_pipeline_first = [&]() {
      if constexpr (kOneEpilogueLoadPipeline)
        return pipelines.epiLoad;
      else
        return makeEpilogueLoadPipeline<EpilogueFirst, int(NumMmaThreads)>(shared_storage.pipelines.epi_load_first, 0u,
                                                                          /*isEpilogueProducer=*/false, isMath);
    }();
    auto& epi_store_pipeline = pipelines.epiStore;

    typename WorkUnitPipeline::Params unit_pipeline_params;
    if (isMainloopProducer) unit_pipeline_params.role = WorkUnitPipeline::ThreadCategory::Producer;
    if (isMath) unit_pipeline_params.role = WorkUnitPipeline::ThreadCategory::Consumer;
    unit_pipeline_params.producer_arv_count = 1;
    unit_pipeline_params.consumer_arv_count = NumMmaThreads;
    // The math warps release a unit slot by arriving on the barrier of block dst_blockid of the cluster: this
    // block's own. (It was 0 when clusters were first tried: rank 1's math warps then freed rank 0's slots and never
    // their own, so rank 1's load warp hung and rank 0's overwrote units its math warps had not read, the hang and
    // the launch failures of session 4's calls 8 and 9.)
    const std::uint32_t clusterRank = kClusterRows == 1 ? 0u : cute::block_rank_in_cluster();
    unit_pipeline_params.dst_blockid = clusterRank;
    WorkUnitPipeline unit_pipeline(shared_storage.pipelines.workUnits, unit_pipeline_params);
    if constexpr (kClusterRows > 1) {
      if (warp_idx == 0 && cute::elect_one_sync()) UnitChannel::init(shared_storage.clusterUnits);
    }
    if constexpr (kStagedEpilogue) {
      if (warp_idx == 0 && cute::elect_one_sync()) initStagedTile(shared_storage.tensors.staged, int(NumMmaThreads));
    }

    // Makes the barrier initialization visible to every thread (of the cluster: the peer arrives on this block's
    // barriers, and multicast loads complete on them).
    if constexpr (kClusterRows > 1) {
      cute::cluster_arrive_relaxed();
      cute::cluster_wait();
    } else {
      __syncthreads();
    }

    CollectiveMainloop collective_mainloop;
    CollectiveMainloopSecond collective_mainloop_second;
    auto blockCoord = [](TileTicket const& t) { return make_coord(int(t.tile.y), int(t.tile.x), _, int(t.tile.z)); };

    if (warp_group_role == WarpGroupRole::Producer) {
      cutlass::arch::warpgroup_reg_dealloc<LoadRegisterRequirement>();
      if constexpr (kStagedEpilogue) {
        if (warp_idx % 4 != 0) {
          runStagedEpilogue(params, shared_storage.tensors.staged, thread_idx - int(cutlass::NumThreadsPerWarp),
                            clusterRank);
          return;
        }
      }
      if (!isMainloopProducer) return;  // no C to load
      auto load_inputs_first = collective_mainloop.load_init(params.first.problem_shape, params.first.mainloop);
      auto load_inputs_second =
          collective_mainloop_second.load_init(params.second.problem_shape, params.second.mainloop);
      const int kTiles[kStages] = {int(size<3>(get<0>(load_inputs_first))), int(size<3>(get<0>(load_inputs_second)))};
      const ProducedOperandA<Policy> unsynchronized{};
      auto mainloop_pipe_producer_state = cutlass::make_producer_start_state<MainloopPipeline>();
      auto second_pipe_producer_state_own = cutlass::make_producer_start_state<MainloopPipelineSecond>();
      auto& second_pipe_producer_state =  // GEMM 1's loads: its own state with kTwoPipelines
          detail::ofStage<kTwoPipelines ? 1 : 0>(mainloop_pipe_producer_state, second_pipe_producer_state_own);
      auto unit_write = cutlass::make_producer_start_state<WorkUnitPipeline>();
      std::uint32_t drawn = 0;  // units this cluster has drawn (the hand-off's index)
      int lastLoadedStage = -1;  // the GEMM whose unit this block's loads last filled the pipeline with (-1: none)
      while (true) {
        if (cute::elect_one_sync()) {
          // A unit is drawn only once the math warps can take it: a block never holds more than kWorkUnitStages
          // units it has not started, so no unit waits in one block while another block idles.
          unit_pipeline.producer_acquire(unit_write);
          ChainUnit next;
          if constexpr (kClusterRows == 1) {
            next = acquireChainUnit(params.queue, params.stages);
          } else if (clusterRank == 0) {
            UnitChannel::waitSlotFree(shared_storage.clusterUnits, drawn);
            next = acquireChainUnit(params.queue, params.stages);
            UnitChannel::send(shared_storage.clusterUnits, drawn, next);
            if (!next.hasWork()) UnitChannel::senderTail(shared_storage.clusterUnits, drawn);
          } else {
            next = UnitChannel::receive(shared_storage.clusterUnits, drawn);
          }
          // The queue hands out cluster tiles: this block's row of it.
          if (kClusterRows > 1 && next.hasWork())
            next.unit.ticket.tile = blockTileOfClusterUnit(next.unit.ticket.tile, kClusterRows, clusterRank);
          shared_storage.units[unit_write.index()] = next;
          unit_pipeline.producer_commit(unit_write);
        }
        ++drawn;
        __syncwarp();
        const ChainUnit unit = shared_storage.units[unit_write.index()];
        ++unit_write;
        if (!unit.hasWork()) break;
        // In an odd last row of 2x1 clusters, rank 1's tile lies past M: its block still loads (its A is all
        // out of bounds, filled with zeros by TMA; its half of B is the peer's too) and computes, but waits for
        // nothing and stores nothing.
        const bool tileInGrid = params.stages[unit.stage].grid.contains(unit.unit.ticket.tile);
        // A cluster's two blocks share a queue index: rank 0 alone records the unit.
        if (params.trace != nullptr && clusterRank == 0 && cute::elect_one_sync()) params.trace[unit.queueIndex].drawn = ::cusync::detail::globalTimerNs();
        const StageView& stage = params.stages[unit.stage];
        const int kTilesOfStage = kTiles[unit.stage];
        const KBlockRange kRange = kBlocksOfPart(unit.unit.part, stage.blocksPerTile, kTilesOfStage);
        const int k0 = warpUniform(kRange.begin);  // uniform to the compiler: warp_uniform.cuh
        const int kCount = warpUniform(kRange.count);
        CUSYNC_CHAIN_DELAY(unit.unit.ticket.tile.x * 7919u + unit.unit.ticket.tile.y * 104729u + unit.stage);
        // GEMM 1's unit: the whole warp looks at the semaphores of every GEMM-0 tile the unit reads, in one round
        // trip; the load thread then waits only for what was not posted yet.
        std::uint32_t knownPostedEnd = 0;
        // Diagnostic builds only (CUSYNC_DIAGNOSTIC_FUSED_NO_WAIT, never in examples or benchmarks): GEMM 1's units
        // do not wait at all, so their results are wrong whenever a unit outruns its producers; timing such a build
        // bounds what the waits and their look-ahead cost inside the fused launch.
#if defined(CUSYNC_DIAGNOSTIC_FUSED_NO_WAIT)
        const ProducedOperandA<Policy>& secondInput = unsynchronized;
#else
        const ProducedOperandA<Policy>& secondInput = params.firstOutput;
#endif
        bool wholeUnitPosted = false;
        if (unit.stage == 1 && secondInput.input.synchronized() && tileInGrid) {
          const std::uint32_t firstRow = unit.unit.ticket.tile.y * std::uint32_t(size<0>(TileShape{}));
          const std::uint32_t tileK = std::uint32_t(kSecondTileK);  // GEMM 1's k-blocks
          const ProducerTileRange reads =
              producerTilesCovering(firstRow, firstRow + std::uint32_t(size<0>(TileShape{})), std::uint32_t(k0) * tileK,
                                    std::uint32_t(k0 + kCount) * tileK, params.firstOutput.producerTileRows,
                                    params.firstOutput.producerTileColumns, params.firstOutput.input.producerGrid);
          knownPostedEnd =
              params.waitForWholeUnit
                  ? warpWaitPostedColumns(params.firstOutput.input, reads, unit.unit.ticket.tile.z,
                                          unit.unit.ticket.iteration, stage, unit.unit.ticket.tile)
                  : warpPollPostedColumns(params.firstOutput.input, reads, unit.unit.ticket.tile.z,
                                          unit.unit.ticket.iteration);
#if !defined(CUSYNC_DIAGNOSTIC_PER_KBLOCK_CHECKS)
          // Every tile the unit reads is posted: its loads take the unsynchronized path, with no look at a semaphore
          // per k-block. Each lane owes the proxy fence after the warp's acquire (whichever lane issues the TMA).
          if (knownPostedEnd >= reads.xEnd) {
#if !defined(CUSYNC_DIAGNOSTIC_NO_POLL_FENCES)
            fenceProxyAsyncGlobal();
#endif
            wholeUnitPosted = true;
          }
#endif
        }
        if constexpr (!kOneTileShape) {
          // The two GEMMs' stage buffers overlap differently (the collectives' layouts differ in B's width): where a
          // block turns from one GEMM's units to the other's, its load warp waits until the math warps have released
          // every stage it filled, in every block its loads multicast to (each stage's empty barrier counts them
          // all). Units come in ticket order, GEMM 0's before GEMM 1's, so this happens once per block.
          // With two pipelines the turn is from GEMM 0's to GEMM 1's (ticket order), so GEMM 0's is the one drained.
          if (lastLoadedStage != -1 && lastLoadedStage != int(unit.stage))
            CollectiveMainloop::waitAllStagesFree(mainloop_pipeline, mainloop_pipe_producer_state);
          lastLoadedStage = int(unit.stage);
        }
        if (unit.stage == 0) {
          Tensor gA_mkl = get<0>(load_inputs_first);
          auto k_tile_iter = cute::make_coord_iterator(idx2crd(k0, shape<3>(gA_mkl)), shape<3>(gA_mkl));
          collective_mainloop.loadSynchronized(params.first.mainloop, mainloop_pipeline, mainloop_pipe_producer_state,
                                               load_inputs_first, blockCoord(unit.unit.ticket), k_tile_iter, kCount,
                                               shared_storage.tensors.mainloop.first, unsynchronized, params.loadOrder,
                                               unit.unit.ticket, stage, 0u, clusterRank, kExtraBytesFirst);
          mainloop_pipe_producer_state.advance(kCount);
        } else {
          Tensor gA_mkl = get<0>(load_inputs_second);
          auto k_tile_iter = cute::make_coord_iterator(idx2crd(k0, shape<3>(gA_mkl)), shape<3>(gA_mkl));
          collective_mainloop_second.loadSynchronized(params.second.mainloop, mainloop_pipeline_second,
                                                      second_pipe_producer_state, load_inputs_second,
                                                      blockCoord(unit.unit.ticket), k_tile_iter, kCount,
                                                      shared_storage.tensors.mainloop.second,
                                                      wholeUnitPosted || !tileInGrid ? unsynchronized : secondInput,
                                                      params.loadOrder, unit.unit.ticket, stage,
                                                      wholeUnitPosted ? 0u : knownPostedEnd, clusterRank,
                                                      kExtraBytesSecond);
          second_pipe_producer_state.advance(kCount);
        }
      }
      // The pipeline the last loads filled (GEMM 0's was drained where the loads turned to GEMM 1's).
      if (kTwoPipelines && lastLoadedStage == 1)
        collective_mainloop_second.load_tail(mainloop_pipeline_second, second_pipe_producer_state);
      else
        collective_mainloop.load_tail(mainloop_pipeline, mainloop_pipe_producer_state);
      return;
    }

    cutlass::arch::warpgroup_reg_alloc<MmaRegisterRequirement>();
    EpilogueFirst epilogue_first(params.first.epilogue, shared_storage.tensors.epilogue.first);
    EpilogueSecond epilogue_second(params.second.epilogue, shared_storage.tensors.epilogue.second);
    // k-blocks per GEMM, as the load warp counts them (ceil(K / TileK), each GEMM's own TileK).
    const int kTiles[kStages] = {int(cute::ceil_div(cute::get<2>(params.first.problem_shape), int(kFirstTileK))),
                                 int(cute::ceil_div(cute::get<2>(params.second.problem_shape), int(kSecondTileK)))};
    typename CollectiveMainloop::PipelineState mainloop_pipe_consumer_state;
    typename CollectiveMainloopSecond::PipelineState second_pipe_consumer_state_own;
    auto& second_pipe_consumer_state =  // GEMM 1's units: their own state with kTwoPipelines
        detail::ofStage<kTwoPipelines ? 1 : 0>(mainloop_pipe_consumer_state, second_pipe_consumer_state_own);
    typename EpilogueSecond::LoadPipelineState epi_load_pipe_consumer_state;
    typename EpilogueFirst::LoadPipelineState epi_load_pipe_consumer_state_first_own;  // when the types differ
    auto& epi_load_pipe_consumer_state_first = detail::ofStage<kOneEpilogueLoadPipeline ? 1 : 0>(
        epi_load_pipe_consumer_state_first_own, epi_load_pipe_consumer_state);
    auto epi_store_pipe_producer_state = cutlass::make_producer_start_state<EpiStorePipeline>();
    typename WorkUnitPipeline::PipelineState unit_read;
    int lastEpilogueStage = -1;  // the stage whose epilogue ran last in this block (-1: none yet)
    std::uint32_t stagedTiles = 0;  // tiles handed to the staged epilogue's warps

    // One unit: MMA over its k-range with collective kMainloop (GEMM 1's only when the widths differ), split-K
    // reduction, epilogue, post. With one width, both GEMMs share this code (one MMA loop, one reduction, as before
    // the second width existed: a copy per GEMM made the split-K units of 192- and 256-column tiles 7-17% slower on
    // the H100, session 9 call 5), and only the parameters and the epilogue are chosen by the unit's stage.
    // Always inlined: a call would cross the wgmma pipeline (ptxas C7510 serializes it; seen for 256x192 tiles).
    auto computeUnit = [&](auto mainloopTag, ChainUnit const& unit, ChainUnitTrace* trace,
                           long long mathStartCycles) __attribute__((always_inline)) {
      constexpr int kMainloop = decltype(mainloopTag)::value;
      using Mainloop = cute::conditional_t<kMainloop == 0, CollectiveMainloop, CollectiveMainloopSecond>;
      using StageTiledMma = typename Mainloop::TiledMma;
      using StageTileShape = typename Mainloop::TileShape;
      const int s = int(unit.stage);  // == kMainloop when the widths differ
      auto const* mainloopParams = &detail::ofStage<kMainloop>(params.first.mainloop, params.second.mainloop);
      if constexpr (kOneTileShape) mainloopParams = s == 0 ? &params.first.mainloop : &params.second.mainloop;
      auto& mainloopStorage =
          detail::ofStage<kMainloop>(shared_storage.tensors.mainloop.first, shared_storage.tensors.mainloop.second);
      Mainloop mainloop;
      StageTiledMma tiled_mma;
      auto blk_shape = StageTileShape{};
      const StageView& stage = params.stages[s];
      const std::uint32_t parts = stage.blocksPerTile;
      // Uniform to the compiler (warp_uniform.cuh): else the MMA loop moves every wgmma descriptor through R2UR.
      const int kCount = warpUniform(kBlocksOfPart(unit.unit.part, parts, kTiles[s]).count);
      const TileCoord tile = unit.unit.ticket.tile;
      auto accumulators = partition_fragment_C(tiled_mma, take<0, 2>(blk_shape));
      auto& pipeline = detail::ofStage<kMainloop>(mainloop_pipeline, mainloop_pipeline_second);
      auto& consumerState = detail::ofStage<kMainloop>(mainloop_pipe_consumer_state, second_pipe_consumer_state);
      mainloop.mma(pipeline, consumerState, accumulators, kCount, mma_thread_idx, mainloopStorage, *mainloopParams);
      mainloop.mma_tail(pipeline, consumerState, kCount);
      consumerState.advance(kCount);
      if (trace != nullptr) {
        trace->mmaDone = ::cusync::detail::globalTimerNs();
        trace->mmaCycles = std::uint64_t(clock64() - mathStartCycles);
      }

      const ProblemShape problem = s == 0 ? params.first.problem_shape : params.second.problem_shape;
      if (!stage.grid.contains(tile)) {  // rank 1's tile past M in an odd last row of clusters: nothing to store
        if (trace != nullptr) trace->done = ::cusync::detail::globalTimerNs();
        return;
      }
      if (parts > 1) {
        const SplitKBuffers split = s == 0 ? params.first.split : params.second.split;
        const int rowsInTile = get<0>(problem) - int(tile.y) * int(size<0>(StageTileShape{}));
        if (!reduceSplitPartials<StageTiledMma, StageTileShape, int(NumMmaThreads)>(
                split, linearIndex(tile, stage.grid), unit.unit.part, parts, accumulators, mma_thread_idx,
                shared_storage.lastArrival, rowsInTile)) {
          if (trace != nullptr) trace->done = ::cusync::detail::globalTimerNs();
          return;  // another part of this tile arrives later and finishes it
        }
      }
      if constexpr (kStagedEpilogue) {
        // The epilogue warps store and post it (and record the unit's end in the trace).
        stageAccumulators<StageTileShape>(shared_storage.tensors.staged, stagedTiles,
                                          StagedUnit{tile, unit.stage, unit.queueIndex}, accumulators, tiled_mma,
                                          mma_thread_idx);
        ++stagedTiles;
      } else {
        // The two epilogues share shared memory: before the first epilogue of the other stage, this block's earlier
        // stores must have read their shared-memory sources (and they are complete anyway, posted or not).
        if (lastEpilogueStage != -1 && lastEpilogueStage != s) {
          completeBulkStores();
          cutlass::arch::NamedBarrier::sync(NumMmaThreads, cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
        }
        lastEpilogueStage = s;
        auto blk_coord = blockCoord(unit.unit.ticket);
        auto storeTile = [&](auto& epilogue, auto& loadPipeline, auto& loadState,
                             auto& epilogueStorage) __attribute__((always_inline)) {
          auto [load_next, store_next] =
              epilogue.store(loadPipeline, loadState, epi_store_pipeline, epi_store_pipe_producer_state, problem,
                             blk_shape, blk_coord, accumulators, tiled_mma, mma_thread_idx, epilogueStorage);
          loadState = load_next;
          epi_store_pipe_producer_state = store_next;
        };
        // Diagnostic builds only (CUSYNC_DIAGNOSTIC_FUSED_NO_EPILOGUE, never in examples or benchmarks): no unit runs
        // its epilogue (nothing stored, results wrong) but GEMM 0's units still post, so timing such a build bounds
        // what an epilogue fully overlapped with the next unit's MMA could save.
#if !defined(CUSYNC_DIAGNOSTIC_FUSED_NO_EPILOGUE)
        if (s == 0) {
          if constexpr (kOneTileShape || kMainloop == 0)
            storeTile(epilogue_first, epi_load_pipeline_first, epi_load_pipe_consumer_state_first,
                      shared_storage.tensors.epilogue.first);
        } else {
          if constexpr (kOneTileShape || kMainloop == 1)
            storeTile(epilogue_second, epi_load_pipeline, epi_load_pipe_consumer_state,
                      shared_storage.tensors.epilogue.second);
        }
#endif
        if (stage.semaphores != nullptr) {
          // The post (tile_post.hpp); the next unit's operands keep streaming in meanwhile.
          CUSYNC_CHAIN_DELAY(tile.x * 31u + tile.y * 131u + unit.stage * 7u + std::uint32_t(mma_thread_idx));
          postStoredTile<Policy, int(NumMmaThreads)>(stage, tile, mma_thread_idx);
        }
        if (trace != nullptr) trace->done = ::cusync::detail::globalTimerNs();
      }
    };

    while (true) {
      unit_pipeline.consumer_wait(unit_read);
      const ChainUnit unit = shared_storage.units[unit_read.index()];
      unit_pipeline.consumer_release(unit_read);
      ++unit_read;
      if (!unit.hasWork()) break;
      ChainUnitTrace* trace =
          params.trace != nullptr && mma_thread_idx == 0 && clusterRank == 0 ? params.trace + unit.queueIndex : nullptr;
      if (trace != nullptr) {
        std::uint32_t sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        trace->stage = unit.stage;
        trace->x = unit.unit.ticket.tile.x;
        trace->y = unit.unit.ticket.tile.y;
        trace->part = unit.unit.part;
        trace->block = blockIdx.x;
        trace->sm = sm;
        trace->blockEntered = blockEntered;
        trace->mathStart = ::cusync::detail::globalTimerNs();
      }
      const long long mathStartCycles = trace != nullptr ? clock64() : 0;
      if constexpr (kOneTileShape)
        computeUnit(cute::Int<0>{}, unit, trace, mathStartCycles);
      else if (unit.stage == 0)
        computeUnit(cute::Int<0>{}, unit, trace, mathStartCycles);
      else
        computeUnit(cute::Int<1>{}, unit, trace, mathStartCycles);
    }
    if constexpr (kStagedEpilogue)
      finishStaging(shared_storage.tensors.staged, stagedTiles, mma_thread_idx);
    else if (lastEpilogueStage == 0)
      epilogue_first.store_tail(epi_load_pipeline_first, epi_load_pipe_consumer_state_first, epi_store_pipeline,
                                epi_store_pipe_producer_state);
    else if (lastEpilogueStage == 1)
      epilogue_second.store_tail(epi_load_pipeline, epi_load_pipe_consumer_state, epi_store_pipeline,
                                 epi_store_pipe_producer_state);
#else
    printf("cusync FusedChainGemmKernel requires sm_90a\n");
#endif
  }
};

}  // namespace CUSYNC_LOAD_ORDER_NAMESPACE
}  // namespace cusync::cutlass_sm90
