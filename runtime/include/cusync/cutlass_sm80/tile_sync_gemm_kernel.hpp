// A CUTLASS sm_80-style GEMM kernel that is one cusync stage: the portable path (cp.async multistage mainloop,
// mma.sync tensor cores, register epilogue), which runs on Ampere and, compiled for sm_90a, on Hopper too.
// Built from CUTLASS's own sm80 collective (fp16_tn_config.hpp) and DefaultEpilogue (activation_epilogue.hpp).
// Device code; needs CUTLASS.
//
// What differs from CUTLASS's sm70/sm80 GemmUniversal kernel (kernel/sm70_gemm.hpp), and why:
//  * The tile comes from the stage's ticket counter (its tile order), not from blockIdx; one tile per block, so
//    the hardware hands tiles to whichever SM frees up, as in the sm90 hooked kernel.
//  * Before the cp.async of each A k-tile, the block waits for the producer tiles that k-tile reads
//    (tile_sync_mainloop.hpp, wait_for_a.hpp).
//  * After the epilogue's global stores, a block barrier, then one thread posts the tile: postThread's release is
//    a fence.acq_rel.gpu followed by a relaxed red, and the barrier orders every thread's (plain st.global)
//    stores before that fence; fences are cumulative (semaphore.cuh).
//  * Optionally every block triggers programmatic dependent launch at its start (sm_90; nothing on sm_80).
// Split-K is not implemented here: stage.blocksPerTile must be 1 (why_not_implementable refuses more).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>

#include "cusync/cutlass_sm80/tile_sync_mainloop.hpp"
#include "cusync/cutlass_sm80/wait_for_a.hpp"
#include "cusync/stage_view.cuh"

namespace cusync::cutlass_sm80 {

// Per-launch synchronization settings of one GEMM stage.
template <class InputPolicy>
struct GemmStageSync {
  StageView stage;                   // this GEMM's stage: tile counter, order, output semaphores (null: no post)
  ProducedOperandA<InputPolicy> a;   // where A comes from (unsynchronized when a.input is null)
  LoadOrder loadOrder = LoadOrder::WaitThenLoad;
  bool triggerDependentsAtStart = false;  // PDL producer (sm_90): let the next kernel launch once all blocks run
};

template <class CollectiveMainloop_, class CollectiveEpilogue_, class InputPolicy_, class OutputPolicy_>
class TileSyncGemmKernel {
 public:
  using CollectiveMainloop = TileSyncMainloop<CollectiveMainloop_>;
  using CollectiveEpilogue = CollectiveEpilogue_;
  using InputPolicy = InputPolicy_;
  using OutputPolicy = OutputPolicy_;
  using TileShape = typename CollectiveMainloop::TileShape;
  using TiledMma = typename CollectiveMainloop::TiledMma;
  using ProblemShape = cute::Shape<int, int, int, int>;  // M, N, K, L

  static constexpr std::uint32_t MaxThreadsPerBlock = cute::size(TiledMma{});
  // Elements of A (and B) per 16-byte cp.async.
  using ElementA = std::remove_cv_t<std::remove_pointer_t<decltype(CollectiveMainloop::Params::ptr_A)>>;
  static constexpr int kCopyElements = 16 / int(sizeof(ElementA));
  static constexpr int MinBlocksPerSm = 1;

  struct SharedStorage {
    union TensorStorage {
      typename CollectiveMainloop::SharedStorage mainloop;
      typename CollectiveEpilogue::SharedStorage epilogue;
    } tensors;
    WorkUnit unit;  // the ticket, broadcast from thread 0; outside the union so the pipeline never overwrites it
  };
  static constexpr int SharedStorageSize = sizeof(SharedStorage);

  struct Arguments {
    ProblemShape problem_shape;
    typename CollectiveMainloop::Params mainloop;  // CUTLASS's sm80 collective: Params are its Arguments
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

  // Why a launch of this kernel would be invalid, or "": an empty problem, rows of A or B that cp.async cannot copy
  // (16-byte aligned pointers, K a multiple of 16 bytes), split-K or a persistent grid (neither is implemented here:
  // one block per tile), a synchronized A without the producer's tile shape, a stage grid that is not the
  // problem's tile grid.
  static std::string why_not_implementable(Arguments const& args) {
    const int m = cute::get<0>(args.problem_shape), n = cute::get<1>(args.problem_shape),
              k = cute::get<2>(args.problem_shape);
    if (m <= 0 || n <= 0 || k <= 0)
      return "empty problem " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    if (k % kCopyElements != 0)
      return "K = " + std::to_string(k) + " is not a multiple of " + std::to_string(kCopyElements) +
             " (16-byte cp.async rows)";
    const auto misaligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 != 0; };
    if (misaligned(args.mainloop.ptr_A) || misaligned(args.mainloop.ptr_B))
      return "A and B must be 16-byte aligned (cp.async)";
    const StageView& stage = args.sync.stage;
    if (stage.blocksPerTile != 1) return "split-K (blocksPerTile > 1) is not implemented by the sm80 kernel";
    if (stage.persistentBlocks != 0)
      return "the sm80 kernel is not persistent (one block per tile); the stage has persistentBlocks = " +
             std::to_string(stage.persistentBlocks);
    const ProducedOperandA<InputPolicy>& a = args.sync.a;
    if (a.input.producerSemaphores != nullptr && (a.producerTileRows == 0 || a.producerTileColumns == 0))
      return "a synchronized A needs the producer's tile shape";
    if (!(tileGrid(args.problem_shape) == stage.grid)) return "stage grid does not match the GEMM's tile grid";
    return "";
  }
  static bool can_implement(Arguments const& args) { return why_not_implementable(args).empty(); }

  // The launch's grid: one block per tile (valid once can_implement(args) holds).
  static dim3 get_grid_shape(Arguments const& args) { return dim3(args.sync.stage.grid.tileCount()); }

  // The stage grid of this GEMM: x = N tiles, y = M tiles, z = L (batch), matching the specs' Grid(x, y).
  static GridShape tileGrid(ProblemShape const& problem) {
    return GridShape{static_cast<std::uint32_t>(cute::ceil_div(cute::get<1>(problem), cute::size<1>(TileShape{}))),
                     static_cast<std::uint32_t>(cute::ceil_div(cute::get<0>(problem), cute::size<0>(TileShape{}))),
                     static_cast<std::uint32_t>(cute::get<3>(problem))};
  }

  CUTLASS_DEVICE void operator()(Params const& params, char* smem_buf) {
    using namespace cute;
    using X = Underscore;
    SharedStorage& storage = *reinterpret_cast<SharedStorage*>(smem_buf);
    const GemmStageSync<InputPolicy>& sync = params.sync;
    const int thread_idx = int(threadIdx.x);

    if (sync.triggerDependentsAtStart) triggerDependentLaunch();
    if (thread_idx == 0) storage.unit = sync.stage.acquireWorkUnit(tileAtLinear(blockIdx.x, sync.stage.grid), 0);
    __syncthreads();
    const TileTicket ticket = storage.unit.ticket;

    auto problem_shape_MNKL = params.problem_shape;
    auto [M, N, K, L] = problem_shape_MNKL;
    auto blk_shape = TileShape{};
    const int m_coord = int(ticket.tile.y), n_coord = int(ticket.tile.x), l_coord = int(ticket.tile.z);
    auto blk_coord_mnkl = make_coord(m_coord, n_coord, _, l_coord);

    Tensor mA_mkl = make_tensor(make_gmem_ptr(params.mainloop.ptr_A), make_shape(M, K, L), params.mainloop.dA);
    Tensor mB_nkl = make_tensor(make_gmem_ptr(params.mainloop.ptr_B), make_shape(N, K, L), params.mainloop.dB);
    Tensor gA = local_tile(mA_mkl(_, _, l_coord), blk_shape, take<0, 3>(blk_coord_mnkl), Step<_1, X, _1>{});
    Tensor gB = local_tile(mB_nkl(_, _, l_coord), blk_shape, take<0, 3>(blk_coord_mnkl), Step<X, _1, _1>{});

    // Rows and columns left from the tile's origin (masks for the M and N residues); K - BLK_K * k_tiles <= 0.
    const int m_residue = M - int(size<0>(gA)) * m_coord;
    const int n_residue = N - int(size<0>(gB)) * n_coord;
    const int k_residue = K - int(size<1>(gA)) * int(size<2>(gA));
    auto residue_mnk = make_tuple(m_residue, n_residue, k_residue);

    TiledMma tiled_mma;
    Tensor accumulators = partition_fragment_C(tiled_mma, take<0, 2>(blk_shape));  // (MMA,MMA_M,MMA_N)
    clear(accumulators);

    const std::uint32_t rowBegin = std::uint32_t(m_coord) * std::uint32_t(size<0>(blk_shape));
    const std::uint32_t rowEnd = std::uint32_t(cute::min(M, int(rowBegin) + int(size<0>(blk_shape))));
    BlockWaitForA<InputPolicy> waitForA(sync.a, ticket, sync.stage, rowBegin, rowEnd);
    CollectiveMainloop collective_mma;
    collective_mma.multiply(accumulators, gA, gB, int(size<2>(gA)), residue_mnk, thread_idx,
                            reinterpret_cast<char*>(&storage.tensors.mainloop), waitForA, sync.loadOrder);

    CollectiveEpilogue epilogue{params.epilogue};
    epilogue(problem_shape_MNKL, blk_shape, blk_coord_mnkl, accumulators, tiled_mma, residue_mnk, thread_idx,
             reinterpret_cast<char*>(&storage.tensors.epilogue));

    if (sync.stage.semaphores != nullptr) {
      // Post: every thread's stores of the tile, then one thread's release.
      __syncthreads();
      if (thread_idx == 0) sync.stage.template postThread<OutputPolicy>(ticket.tile);
    }
  }
};

// The __global__ entry point. __grid_constant__ (sm_70+): the kernel takes references into its parameters (the
// stage view, the producer's view); without it each reference would force a copy of the parameters onto the stack.
template <class Kernel>
__global__ void __launch_bounds__(Kernel::MaxThreadsPerBlock, Kernel::MinBlocksPerSm)
    tileSyncGemmEntry(__grid_constant__ typename Kernel::Params const params) {
  extern __shared__ char smem[];
  Kernel{}(params, smem);
}

}  // namespace cusync::cutlass_sm80
