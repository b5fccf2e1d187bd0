// A CUTLASS sm90 implicit-GEMM 2-D convolution (fprop, NHWC) that is one cusync stage: TMA im2col + wgmma,
// warp-specialized, one output tile per block, built from CUTLASS's own conv mainloop collective
// (cutlass/conv/collective/sm90_implicit_gemm_gmma_ss_warpspecialized.hpp) and an sm90 epilogue collective. Device
// code; needs CUTLASS.
//
// It is tile_sync_gemm_kernel.hpp's structure over the conv collective; what differs from CUTLASS's ConvUniversal
// (which is GemmUniversal with KernelImplicitTmaWarpSpecializedSm90, one math warp group), and why:
//  * One block per work unit (a tile, or with split-K one part of a tile's reduction), taken from the stage's
//    ticket counter in the stage's order (not blockIdx): the hardware hands units to whichever SM is free, so two
//    stages overlap (docs/GPU_NOTES.md).
//  * The activation-loading thread waits, before its first activation load, for every producer tile of the tile's
//    halo: pixel tiles [lowest(first)/TileM, highest(last)/TileM] (cusync/conv_halo.h, the range of
//    examples/conv2d/*.dep; one row of a table the host computes, conv_halo_rows.h) times all channel tiles. That
//    covers what any k-range of the tile reads, split-K parts included; HaloWaiter says why not k-block by k-block.
//  * Split-K (stage.blocksPerTile = P > 1): part p reduces k-blocks [p*K/P, (p+1)*K/P); parts never wait for each
//    other; the last to arrive adds the others' fp32 partials, runs the epilogue and posts (split_k_reduction.hpp,
//    the GEMMs' scheme, with the arrival counter reset by the last arrival: wrap-safe across launches).
//  * Two producer threads: the filter (B) loads, which depend on no stage, stream from the TMA warp while warp 1
//    waits and issues the activation (A) loads, so the weights stream in while the block still waits, and neither
//    thread's per-k-block instructions limit the kernel (TileSyncConvMainloop::loadFilters).
//  * After the epilogue (bias + ReLU in the fusion the instance chooses), the math threads complete their TMA
//    stores (bulk wait_group 0, not CUTLASS's .read form), synchronize, and one thread posts the tile (release).
//  * Optionally every block triggers programmatic dependent launch at its start (PDL producer), as the GEMMs do.
// Not supported (refused in whyNotImplementable): clusters other than 1x1 (tiles come from a counter, not from
// cluster position), persistent stages, dilation, filters and strides conv_halo.h does not describe.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
// The conv builders use KernelHardwareInfo without including it (CUTLASS 4.2).
#include <cutlass/kernel_hardware_info.hpp>
#include <cutlass/conv/collective/collective_builder.hpp>
#include <cutlass/conv/convnd_problem_shape.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/pipeline/pipeline.hpp>

#include "cusync/conv_halo.h"
#include "cusync/conv_stage_checks.h"
#include "cusync/cutlass/kernel_pipelines.hpp"
#include "cusync/cutlass/split_k_reduction.hpp"
#include "cusync/cutlass/tile_post.hpp"
#include "cusync/split_k_range.h"
#include "cusync/producer_range_wait.cuh"
#include "cusync/stage_view.cuh"
#include "cusync/stress_delay.cuh"
#include "cusync/warp_uniform.cuh"

// Stress testing (examples/conv2d/conv_stress.cu, stress_delay.cuh): each tile is delayed by a pseudo-random time,
// in the activation-loading thread before its halo wait (a consumer that starts late or early against its
// producers) and in the math warps before the epilogue's stores (a producer whose tile lands late, so that a consumer
// reading it without a sound wait would read the NaN the test poisoned it with), when the translation unit defines
// CUSYNC_CHAIN_DELAY_NS.

namespace cusync::cutlass_sm90 {

// Where a consumer convolution's activation comes from: the output of a producer stage (another convolution, an
// implicit GEMM whose tile rows are pixel tiles of `producerTileM` pixels and whose columns are channel tiles).
template <class InputPolicy>
struct ProducedActivation {
  InputView<InputPolicy> input;     // producer semaphores; unsynchronized when null
  ConvHalo halo;                    // how this convolution reads the producer's image
  std::uint32_t producerTileM = 0;  // pixels per producer tile row
  std::uint32_t producerTileN = 0;  // channels per producer tile column
  ConvReduction reduction;          // this convolution's K (set from the problem by to_underlying_arguments)
  // Per consumer pixel tile (grid row y): the producer pixel tiles its halo reads, producerPixelTilesRead's range
  // computed on the host (conv_halo_rows.h) from this halo, both tile heights and the producer grid; needed when
  // synchronized, `haloRowCount` rows (the stage grid's y), in device memory that outlives every launch (and graph
  // replay) that reads it.
  const PixelTileRange* haloRows = nullptr;
  std::uint32_t haloRowCount = 0;
};

// Per-launch synchronization settings of one convolution stage.
template <class InputPolicy>
struct ConvStageSync {
  StageView stage;                         // this convolution's stage: tile counter, order, output semaphores
  ProducedActivation<InputPolicy> activation;
  bool triggerDependentsAtStart = false;   // PDL producer: let the next kernel launch once all blocks run
  // Split-K (stage.blocksPerTile > 1): stage.grid.tileCount() * blocksPerTile * TileM * TileN fp32 partials and one
  // arrival counter per tile, zeroed once (never again: the last arrival resets it).
  SplitKBuffers split;
};

// The wait of one work unit (a tile, or one split-K part of it): before its first activation load, for every
// producer tile of the output tile's halo, all channel tiles of producer pixel tiles [lowest(first pixel),
// highest(last pixel)] / producerTileM (producerPixelTilesRead). That is a superset of what any k-range of the tile
// reads (producerTilesReadByTap gives the exact set per k-block, tests/runtime/conv_halo_helper_test.cpp checks the
// inclusion), so the wait is sound for split-K parts too.
// Why not per k-block: a 3x3 filter's first taps already reach from the row above to the row below, so the first
// k-block needs nearly the whole halo, while re-checking at every k-block cost the one issuing thread a semaphore
// round trip whenever the remembered rectangle could not grow (measured on the H100, session call 6: the 7x7x512
// chain at B = 1 took 58.0 us synchronized against 31.1 us stream-ordered).
// First a look without waiting: when the producer is ahead, as it is for most consumer tiles of an overlapped chain,
// the unit then waits for nothing at all.
template <class InputPolicy>
struct HaloWaiter {
  PixelTileRange rows;
  bool posted = true;  // every producer tile of the halo is known posted (or nothing is synchronized)

  // `haloRows`: the tile's row of ProducedActivation::haloRows (unread when not synchronized).
  CUTLASS_DEVICE HaloWaiter(ProducedActivation<InputPolicy> const& produced, TileTicket const& ticket,
                            PixelTileRange haloRows) {
    if (!produced.input.synchronized()) return;
    rows = haloRows;
    posted = pollWholeHalo(produced, ticket);
  }

  // The reads go out kInFlight at a time, so that their round trips to L2 overlap. One after another, each behind the
  // previous one's comparison, they cost the consumer convolution 2.5 us per kernel at 28x28x128 B = 8 (6 producer
  // tiles per halo) with every tile already posted: each kernel alone under ncu, 14.6 us against 12.1 us
  // stream-ordered (H200, session 24). The same batching as the GEMMs' ProducerRangeWait::pollAhead.
  static constexpr std::uint32_t kInFlight = 8;

  CUTLASS_DEVICE bool pollWholeHalo(ProducedActivation<InputPolicy> const& produced, TileTicket const& ticket) const {
    const GridShape grid = produced.input.producerGrid;
    const std::uint32_t count = rows.last < rows.first ? 0u : (rows.last - rows.first + 1u) * grid.x;
    std::uint32_t x = 0, y = rows.first;  // the next producer tile to read, row by row
    for (std::uint32_t base = 0; base < count; base += kInFlight) {
      std::uint32_t seen[kInFlight] = {}, target[kInFlight] = {};
      CUTLASS_PRAGMA_UNROLL
      for (std::uint32_t j = 0; j < kInFlight; ++j)
        if (base + j < count) {
          const TileCoord t{x, y, ticket.tile.z};
          target[j] = InputPolicy::value(t, grid) * (ticket.iteration + 1u);
          seen[j] = ::cusync::detail::loadRelaxed(produced.input.producerSemaphores + InputPolicy::sem(t, grid));
          if (++x == grid.x) {
            x = 0;
            ++y;
          }
        }
      CUTLASS_PRAGMA_UNROLL
      for (std::uint32_t j = 0; j < kInFlight; ++j)
        if (base + j < count && !::cusync::detail::reached(seen[j], target[j])) return false;
    }
    // The acquire of the relaxed reads, then the proxy fence the TMA loads of the posted tiles need.
    ::cusync::detail::fenceAcquireRelease();
    fenceProxyAsyncGlobal();
    return true;
  }

  // Called before each activation load; waits only before the first.
  CUTLASS_DEVICE void waitBeforeLoad(ProducedActivation<InputPolicy> const& produced, TileTicket const& ticket,
                                     StageView const& consumer) {
    if (posted) return;
    SatisfiedSemaphoreCache<4> seen;  // RowSync: one semaphore per pixel tile, read once
    for (std::uint32_t y = rows.first; y <= rows.last; ++y)
      for (std::uint32_t x = 0; x < produced.input.producerGrid.x; ++x)
        waitThreadCached(produced.input, seen, TileCoord{x, y, ticket.tile.z}, ticket.iteration, consumer,
                         ticket.tile);
    // The producer's tiles were stored by TMA and posted after a release; this thread's acquire (generic proxy)
    // must be ordered before its TMA loads of them (async proxy).
    fenceProxyAsyncGlobal();
    posted = true;
  }
};

// The TMA producer side of CUTLASS's sm90 implicit-GEMM conv mainloop with the tile-level wait. Only the load
// changes: shared-memory layouts, TMA (im2col) descriptors, pipeline and MMA are CUTLASS's, inherited unchanged.
template <class BaseMainloop>
struct TileSyncConvMainloop : BaseMainloop {
  using typename BaseMainloop::MainloopPipeline;
  using typename BaseMainloop::PipelineState;
  using typename BaseMainloop::Params;
  using typename BaseMainloop::TensorStorage;
  using typename BaseMainloop::SmemLayoutA;
  using typename BaseMainloop::SmemLayoutB;
  using typename BaseMainloop::DispatchPolicy;
  using typename BaseMainloop::TileShape;
  static constexpr int Stages = DispatchPolicy::Stages;

  // The loads of k-blocks [k_begin, k_begin + k_tile_count) of output tile (m_coord, n_coord), issued by two warps
  // of the producer warp group: the filter (B) by the TMA warp (loadFilters), the activation (A) by warp 1
  // (loadActivations), each on one elected thread. Why two: at these tiles a k-block's math is short (64 x 64 x 64:
  // about 256 cycles of wgmma), and one thread issuing both loads, with the im2col coordinates and the iterators
  // of both, was the kernel's limit. Measured on the H100 (session 18, call 3; resnet 14x14x256, B = 8, 64x64x64
  // s6): about 92 dependent instructions per k-block against CUTLASS's 68, and 15.7 us per convolution against
  // 11.5, in the same ratio. Split, each thread's chain is about half, and the filter stream never waits behind a
  // halo wait.
  // How the two share a stage: the filter thread acquires it (its barrier then expects A's and B's bytes together,
  // producer_acquire) and issues B; the activation thread waits only until the stage is free (the same phase of its
  // empty barrier, without arriving), then, after the halo wait, issues A onto the same full barrier. A's bytes may
  // land before B's acquire has set the expectation: the barrier's transaction count may go below zero, and the
  // phase cannot complete before that acquire's arrival anyway. The acquire of k-block i needs the math warps to free
  // the stage of k-block i - Stages, which needs A of k-blocks up to i - Stages, issued already unless the
  // activation thread waits for a producer: then the filter thread waits too, which is all the waiting there is.

  // The TMA warp's part: B of every k-block, acquiring each stage.
  template <class TensorA, class TensorB>
  CUTLASS_DEVICE void loadFilters(Params const& mainloop_params, MainloopPipeline pipeline,
                                  PipelineState smem_pipe_write, cute::tuple<TensorA, TensorB> const& load_inputs,
                                  int n_coord, int k_begin, int k_tile_count, TensorStorage& shared_tensors) {
    using namespace cute;
    if (!cute::elect_one_sync()) return;
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{});  // (BLK_N,BLK_K,PIPE)
    auto block_tma_b = mainloop_params.tma_load_b.get_slice(0);
    Tensor tBgB = block_tma_b.partition_S(get<1>(load_inputs)(_, _, n_coord, _));  // (TMA,TMA_N,TMA_K,k)
    Tensor tBsB = block_tma_b.partition_D(sB);                                     // (TMA,TMA_N,TMA_K,PIPE)
    auto k_iter = kBlockIterator(load_inputs, k_begin);
    CUTLASS_PRAGMA_NO_UNROLL
    for (int k = 0; k < k_tile_count; ++k) {
      pipeline.producer_acquire(smem_pipe_write);
      copy(mainloop_params.tma_load_b.with(*pipeline.producer_get_barrier(smem_pipe_write), 0), tBgB(_, _, _, *k_iter),
           tBsB(_, _, _, smem_pipe_write.index()));
      ++k_iter;
      ++smem_pipe_write;
    }
  }

  // Warp 1's part: A of every k-block, each once its stage is free and, before the first, the tile's halo is posted
  // (HaloWaiter). In hardware order with waits (`drawTicket`) this thread draws the block's ticket first, for the
  // iteration its waits' targets need; the atomic's round trip overlaps the filter loads.
  template <class TensorA, class TensorB, class InputPolicy>
  CUTLASS_DEVICE void loadActivations(Params const& mainloop_params, MainloopPipeline pipeline,
                                      PipelineState smem_pipe_write, cute::tuple<TensorA, TensorB> const& load_inputs,
                                      int m_coord, int k_begin, int k_tile_count, TensorStorage& shared_tensors,
                                      ProducedActivation<InputPolicy> const& produced, TileTicket ticket,
                                      StageView const& consumer, bool drawTicket) {
    using namespace cute;
    if (!cute::elect_one_sync()) return;
    // The tile's halo rows (a load) and the ticket (an atomic) are independent: issued together, their round trips
    // overlap.
    const PixelTileRange haloRows =
        produced.input.synchronized() ? produced.haloRows[ticket.tile.y] : PixelTileRange{};
    if (drawTicket) ticket.iteration = consumer.acquireWorkUnit(ticket.tile, 0).ticket.iteration;
    Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{});  // (BLK_M,BLK_K,PIPE)
    auto block_tma_a = mainloop_params.tma_load_a.get_slice(0);
    Tensor tAgA = block_tma_a.partition_S(get<0>(load_inputs)(_, _, m_coord, _));  // (TMA,TMA_M,TMA_K,k)
    Tensor tAsA = block_tma_a.partition_D(sA);                                     // (TMA,TMA_M,TMA_K,PIPE)
    auto k_iter = kBlockIterator(load_inputs, k_begin);
    CUSYNC_CHAIN_DELAY(ticket.tile.x * 7919u + ticket.tile.y * 104729u + std::uint32_t(k_begin));
    HaloWaiter<InputPolicy> waiter(produced, ticket, haloRows);
    CUTLASS_PRAGMA_NO_UNROLL
    for (int k = 0; k < k_tile_count; ++k) {
      waitStageFree(pipeline, smem_pipe_write);
      waiter.waitBeforeLoad(produced, ticket, consumer);
      copy(mainloop_params.tma_load_a.with(*pipeline.producer_get_barrier(smem_pipe_write), 0), tAgA(_, _, _, *k_iter),
           tAsA(_, _, _, smem_pipe_write.index()));
      ++k_iter;
      ++smem_pipe_write;
    }
  }

  // The k-blocks are walked with coordinate iterators, as CUTLASS's conv collective does: the reduction mode is
  // hierarchical (channel blocks, filter columns, filter rows), and indexing it with a linear k costs the issuing
  // thread several integer divisions per k-block. Measured on the H100: that made the issue rate, not the memory
  // system, the limit at one block per SM (the 7x7x512 chain took 45.7 us against CUTLASS's 27.6).
  template <class TensorA, class TensorB>
  CUTLASS_DEVICE static auto kBlockIterator(cute::tuple<TensorA, TensorB> const& load_inputs, int k_begin) {
    using namespace cute;
    auto kBlocks = shape<3>(get<0>(load_inputs));  // A's and B's k modes have the same (C, S, R) shape
    return make_coord_iterator(idx2crd(k_begin, kBlocks), kBlocks);
  }
};

template <class CollectiveMainloop_, class CollectiveEpilogue_, class InputPolicy_, class OutputPolicy_,
          int MinBlocksPerSm_ = 1>
class TileSyncConvKernel {
 public:
  using CollectiveMainloop = TileSyncConvMainloop<CollectiveMainloop_>;
  using CollectiveEpilogue = CollectiveEpilogue_;
  using InputPolicy = InputPolicy_;
  using OutputPolicy = OutputPolicy_;
  using TileShape = typename CollectiveMainloop::TileShape;
  using TiledMma = typename CollectiveMainloop::TiledMma;
  using ClusterShape = typename CollectiveMainloop::DispatchPolicy::ClusterShape;
  using ProblemShape = typename CollectiveMainloop::ProblemShape;  // cutlass::conv::ConvProblemShape
  // (M = N*P*Q pixels, N = output channels, K = (C, S, R), L = 1): the shape CUTLASS's mainloop tiles.
  using ProblemShapeMNKL = decltype(CollectiveMainloop::get_problem_shape_MNKL(ProblemShape{}));
  // The output as the plain row-major GEMM D it is (packed NHWC: pixel-major, channels contiguous).
  using EpilogueProblemShape = cute::Shape<int, int, int, int>;
  static_assert(CollectiveMainloop::DispatchPolicy::ConvOp == cutlass::conv::Operator::kFprop,
                "the cusync convolution is fprop only");
  static_assert(cute::size(ClusterShape{}) == 1, "tiles come from a stage counter: clusters are not supported");

  static constexpr int MinBlocksPerSm = MinBlocksPerSm_;
  static constexpr std::uint32_t NumLoadWarpGroups = 1;
  static constexpr std::uint32_t NumMmaThreads = cute::size(TiledMma{});
  static constexpr std::uint32_t MaxThreadsPerBlock = NumMmaThreads + NumLoadWarpGroups * cutlass::NumThreadsPerWarpGroup;
  // No register reconfiguration (setmaxnreg), as in CUTLASS's own one-math-warp-group kernel: moving registers from
  // the load warp group to the math warp group pins the kernel at the 232 registers per thread it then asks for, one
  // block per SM. Measured on the H100 (resnet, 64x64x64 s4): without it 3 blocks fit per SM and the 56x56 chain at
  // B = 32 went from 128.0 to 68.4 us (CUTLASS stock: 59.6).

  // As in the GEMM: mainloop and epilogue shared memory are a union, safe only because no C is loaded.
  static_assert(cute::is_void_v<typename CollectiveEpilogue::ElementC>,
                "the one-tile-per-block cusync convolution unions mainloop and epilogue shared memory: no C operand");

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
  };
  static constexpr int SharedStorageSize = sizeof(SharedStorage);

  struct Arguments {
    ProblemShape problem_shape;
    typename CollectiveMainloop::Arguments mainloop;
    typename CollectiveEpilogue::Arguments epilogue;
    ConvStageSync<InputPolicy> sync;
  };

  struct Params {
    ProblemShapeMNKL problem_shape;
    EpilogueProblemShape epilogue_shape;
    typename CollectiveMainloop::Params mainloop;
    typename CollectiveEpilogue::Params epilogue;
    ConvStageSync<InputPolicy> sync;
  };

  static EpilogueProblemShape epilogueShape(ProblemShape const& problem) {
    const int pixels = problem.shape_C[0] * problem.shape_C[1] * problem.shape_C[2];
    const int reduction = problem.shape_B[1] * problem.shape_B[2] * problem.shape_B[3];
    return EpilogueProblemShape{pixels, problem.shape_C[3], reduction, 1};
  }

  static constexpr std::uint32_t TileK = cute::size<2>(TileShape{});
  static constexpr ConvTileShape kTileShape{std::uint32_t(cute::size<0>(TileShape{})),
                                            std::uint32_t(cute::size<1>(TileShape{})), TileK};

  // CUTLASS's problem in the plain numbers of conv_stage_checks.h. ConvProblemShape computes shape_C from shape_A,
  // so the output's batch is the activation's.
  static ConvProblem convProblemOf(ProblemShape const& problem) {
    ConvProblem plain;
    plain.batch = problem.shape_A[0];
    plain.inputHeight = problem.shape_A[1];
    plain.inputWidth = problem.shape_A[2];
    plain.inputChannels = problem.shape_A[3];
    plain.outputHeight = problem.shape_C[1];
    plain.outputWidth = problem.shape_C[2];
    plain.outputChannels = problem.shape_C[3];
    plain.filterHeight = problem.shape_B[1];
    plain.filterWidth = problem.shape_B[2];
    for (int i = 0; i < 2; ++i) {
      plain.stride[i] = problem.traversal_stride[i];
      plain.padding[i] = problem.lower_padding[i];
      plain.dilation[i] = problem.dilation[i];
    }
    return plain;
  }

  // This problem's K as the k-block waits walk it: C channels of a filter x filter stencil, TileK per k-block.
  static ConvReduction reductionOf(ProblemShape const& problem) {
    return convReductionOf(convProblemOf(problem), TileK);
  }

  static Params to_underlying_arguments(Arguments const& args) {
    ConvStageSync<InputPolicy> sync = args.sync;
    sync.activation.reduction = reductionOf(args.problem_shape);
    return Params{CollectiveMainloop::get_problem_shape_MNKL(args.problem_shape), epilogueShape(args.problem_shape),
                  CollectiveMainloop::to_underlying_arguments(args.problem_shape, args.mainloop, nullptr),
                  CollectiveEpilogue::to_underlying_arguments(epilogueShape(args.problem_shape), args.epilogue,
                                                              nullptr),
                  sync};
  }

  // The launch's grid: one block per work unit (tile x split-K part).
  static dim3 get_grid_shape(Arguments const& args) { return dim3(args.sync.stage.workUnits()); }

  // The stage grid: x = output-channel tiles, y = pixel tiles, z = 1, the specs' Grid(x, y).
  static GridShape tileGrid(ProblemShape const& problem) { return convTileGrid(convProblemOf(problem), kTileShape); }

  // Why a launch would be invalid, or null: CUTLASS's own limits, then cusync's (conv_stage_checks.h): a stage that
  // is not this convolution's tile grid or that asks for what this kernel does not do, and a producer that the halo
  // cannot describe: the halo must be this problem's (output size, filter, stride, padding filter/2, no dilation)
  // and the producer grid must have the pixel tiles of this problem's input image.
  static const char* whyNotImplementable(Arguments const& args) {
    ProblemShape const& problem = args.problem_shape;
    if (!CollectiveMainloop::can_implement(problem, args.mainloop) ||
        !CollectiveEpilogue::can_implement(epilogueShape(problem), args.epilogue))
      return "CUTLASS cannot implement this convolution";
    const StageView& stage = args.sync.stage;
    const ProducedActivation<InputPolicy>& produced = args.sync.activation;
    ConvStageLaunch launch;
    launch.problem = convProblemOf(problem);
    launch.tile = kTileShape;
    launch.stage.grid = stage.grid;
    launch.stage.persistentBlocks = stage.persistentBlocks;
    launch.stage.streamKChunks = stage.streamKChunks;
    launch.stage.blocksPerTile = stage.blocksPerTile;
    launch.stage.wholeTiles = stage.wholeTiles;
    launch.stage.splitBuffers = args.sync.split.partials != nullptr && args.sync.split.arrivals != nullptr;
    launch.activation.waits = produced.input.producerSemaphores != nullptr;
    launch.activation.producerGrid = produced.input.producerGrid;
    launch.activation.halo = produced.halo;
    launch.activation.producerTileM = produced.producerTileM;
    launch.activation.producerTileN = produced.producerTileN;
    launch.activation.haloRows = produced.haloRows;
    launch.activation.haloRowCount = produced.haloRowCount;
    return whyConvStageNotImplementable(launch);
  }
  static bool can_implement(Arguments const& args) { return whyNotImplementable(args) == nullptr; }

  using MainloopPipeline = typename CollectiveMainloop::MainloopPipeline;
  using EpiLoadPipeline = typename CollectiveEpilogue::LoadPipeline;
  using EpiStorePipeline = typename CollectiveEpilogue::StorePipeline;

  CUTLASS_DEVICE void operator()(Params const& params, char* smem_buf) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace cute;
    enum class WarpGroupRole { Producer = 0, Consumer = 1 };
    enum class ProducerWarpRole { Mainloop = 0, Warp1 = 1, Epilogue = 2, Warp3 = 3 };

    SharedStorage& shared_storage = *reinterpret_cast<SharedStorage*>(smem_buf);
    const int thread_idx = int(threadIdx.x);
    const int warp_idx = cutlass::canonical_warp_idx_sync();
    const int warp_group_thread_idx = thread_idx % cutlass::NumThreadsPerWarpGroup;
    const int mma_thread_idx = thread_idx % NumMmaThreads;
    const auto warp_group_role = WarpGroupRole(cutlass::canonical_warp_group_idx());
    const auto producer_warp_role = ProducerWarpRole(warp_idx % cutlass::NumWarpsPerWarpGroup);
    const ConvStageSync<InputPolicy>& sync = params.sync;

    if (sync.triggerDependentsAtStart) triggerDependentLaunch();

    // Which unit this block computes, and who draws its ticket. The ticket is a round trip to L2 behind every
    // other block's atomic on the same counter; measured on the H100 (session 5), drawing it before the block
    // barrier cost the stream-ordered chains 5-10% (56x56x64 at B = 32: 66.9 -> 61.7 us without it).
    //  * A stage in its own tile order (not hardware order) that synchronizes: thread 0 draws the ticket before the
    //    barrier, since the tile depends on it (the ticket names tile and part).
    //  * Hardware order ("avoid custom order", T): the unit is the one blockIdx names. The counter still counts the
    //    block, since a consumer's wait-kernel counts this stage's started blocks: when this stage waits, its
    //    activation-loading thread draws the ticket itself, while the filter loads stream (it alone needs the
    //    iteration, for its waits' targets; the post adds 1 whatever the iteration); when it only posts, thread 0
    //    adds to the counter without waiting for the result.
    //  * A stage that neither posts nor waits, unsplit, counts nothing: nobody waits for it.
    // Only hardware order reads the unit the block's index names (hardwareUnit): it costs integer divisions, which
    // every thread would run, and thread 0 before its ticket's round trip.
    const std::uint32_t parts = sync.stage.blocksPerTile;
    const bool waits = sync.activation.input.synchronized();
    const bool counted = waits || sync.stage.countsStartedBlocks();
    const bool ticketOrder = counted && !sync.stage.hardwareOrder;
    if (thread_idx == 0) {
      if (ticketOrder)  // never hardware order: the ticket alone names the unit
        shared_storage.unit = sync.stage.acquireWorkUnit(TileCoord{}, 0u);
      else if (counted && !waits)
        sync.stage.countBlock();
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
        makeKernelPipelines<CollectiveMainloop, CollectiveEpilogue, int(NumMmaThreads)>(
            shared_storage.pipelines, params.mainloop.tma_transaction_bytes, params.epilogue, isMainloopProducer,
            isEpilogueProducer, warp_group_role != WarpGroupRole::Producer, warp_group_thread_idx);

    typename CollectiveMainloop::PipelineState mainloop_pipe_consumer_state;
    typename CollectiveEpilogue::LoadPipelineState epi_load_pipe_consumer_state;
    auto mainloop_pipe_producer_state = cutlass::make_producer_start_state<MainloopPipeline>();
    auto epi_store_pipe_producer_state = cutlass::make_producer_start_state<EpiStorePipeline>();

    // Makes the pipeline initialization and the ticket visible to every thread.
    __syncthreads();
    // Without a ticket: hardware order, or a stage that neither posts nor waits (its own order from blockIdx).
    const WorkUnit unit = ticketOrder                  ? shared_storage.unit
                          : sync.stage.hardwareOrder ? sync.stage.hardwareUnit(blockIdx.x)
                                                     : sync.stage.unsynchronizedWorkUnit(blockIdx.x);
    const TileTicket ticket = unit.ticket;
    // Hardware order with waits: the activation-loading thread draws the ticket (above); the iteration is its.
    const bool loadThreadDrawsTicket = waits && !ticketOrder;

    TiledMma tiled_mma;
    CollectiveMainloop collective_mainloop;
    auto load_inputs = collective_mainloop.load_init(params.problem_shape, params.mainloop);
    const int k_tiles_total = int(size<3>(get<0>(load_inputs)));
    // This part's k-range: a balanced split, every part at least one k-block (whyNotImplementable: parts <= K).
    const KBlockRange kRange = kBlocksOfPart(unit.part, parts, k_tiles_total);
    // Warp-uniform to the compiler (warp_uniform.cuh): the unit may come from shared memory, and the mainloops'
    // loops over these keep their pipeline state in uniform registers only when it can prove them uniform.
    const int k_begin = warpUniform(int(kRange.begin));
    const int k_tile_count = warpUniform(int(kRange.count));
    const int m_coord = warpUniform(int(ticket.tile.y));
    const int n_coord = warpUniform(int(ticket.tile.x));

    if (warp_group_role == WarpGroupRole::Producer) {
      if (producer_warp_role == ProducerWarpRole::Mainloop) {
        collective_mainloop.loadFilters(params.mainloop, mainloop_pipeline, mainloop_pipe_producer_state, load_inputs,
                                        n_coord, k_begin, k_tile_count, shared_storage.tensors.mainloop);
        mainloop_pipe_producer_state.advance(k_tile_count);
        collective_mainloop.load_tail(mainloop_pipeline, mainloop_pipe_producer_state);
      } else if (producer_warp_role == ProducerWarpRole::Warp1) {
        collective_mainloop.loadActivations(params.mainloop, mainloop_pipeline, mainloop_pipe_producer_state,
                                            load_inputs, m_coord, k_begin, k_tile_count,
                                            shared_storage.tensors.mainloop, sync.activation, ticket, sync.stage,
                                            loadThreadDrawsTicket);
      }
    } else {
      CollectiveEpilogue collective_epilogue(params.epilogue, shared_storage.tensors.epilogue);
      auto blk_shape = TileShape{};
      auto accumulators = partition_fragment_C(tiled_mma, take<0, 2>(blk_shape));
      collective_mainloop.mma(mainloop_pipeline, mainloop_pipe_consumer_state, accumulators, k_tile_count,
                              mma_thread_idx, shared_storage.tensors.mainloop, params.mainloop);
      collective_mainloop.mma_tail(mainloop_pipeline, mainloop_pipe_consumer_state, k_tile_count);
      // As in the GEMM (TileSyncGemmKernel::meetBeforeEpilogue): the epilogue's shared memory is the mainloop's, so
      // every math warp group's last wgmma must have read its stages before any warp group writes epilogue data.
      if constexpr (NumMmaThreads > cutlass::NumThreadsPerWarpGroup)
        cutlass::arch::NamedBarrier::sync(NumMmaThreads, cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
      if (parts > 1) {
        const int rowsInTile = get<0>(params.epilogue_shape) - m_coord * int(size<0>(TileShape{}));
        if (!reduceSplitPartials<TiledMma, TileShape, int(NumMmaThreads)>(
                sync.split, linearIndex(ticket.tile, sync.stage.grid), unit.part, parts, accumulators,
                mma_thread_idx, shared_storage.lastArrival, rowsInTile))
          return;  // another part of this tile arrives later and finishes it
      }
      auto blk_coord = make_coord(m_coord, n_coord, _, 0);
      CUSYNC_CHAIN_DELAY(ticket.tile.x * 31u + ticket.tile.y * 131u + std::uint32_t(mma_thread_idx));
      auto [epi_load_next, epi_store_next] = collective_epilogue.store(
          epi_load_pipeline, epi_load_pipe_consumer_state, epi_store_pipeline, epi_store_pipe_producer_state,
          params.epilogue_shape, blk_shape, blk_coord, accumulators, tiled_mma, mma_thread_idx,
          shared_storage.tensors.epilogue);
      collective_epilogue.store_tail(epi_load_pipeline, epi_load_next, epi_store_pipeline, epi_store_next);

      postStoredTile<OutputPolicy, int(NumMmaThreads)>(sync.stage, ticket.tile, mma_thread_idx);
    }
#else
    printf("cusync TileSyncConvKernel requires sm_90a\n");
#endif
  }
};

// The __global__ entry point. Params hold TMA descriptors, which must live in kernel parameter space.
template <class Kernel>
__global__ void __launch_bounds__(Kernel::MaxThreadsPerBlock, Kernel::MinBlocksPerSm)
    tileSyncConvEntry(CUTLASS_GRID_CONSTANT typename Kernel::Params const params) {
  extern __shared__ char smem[];
  Kernel{}(params, smem);
}

}  // namespace cusync::cutlass_sm90
