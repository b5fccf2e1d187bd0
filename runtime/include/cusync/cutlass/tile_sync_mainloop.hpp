// The TMA producer side of CUTLASS's sm90 warp-specialized mainloop (MainloopSm90TmaGmmaWarpSpecialized), with a
// wait before each A tile that another stage produces. Device code; needs CUTLASS's headers.
//
// Only `load()` changes: the collective's shared-memory layouts, TMA descriptors, pipeline and MMA are CUTLASS's
// own, inherited unchanged. The wait runs on the one elected thread that issues the TMA copies, so no math warp
// ever spins.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/gemm/collective/collective_builder.hpp>

#include "cusync/cutlass/kernel_pipelines.hpp"
#include "cusync/cutlass/load_order.hpp"
#include "cusync/cutlass/load_order_namespace.hpp"
#include "cusync/producer_range_wait.cuh"
#include "cusync/producer_tile_range.hpp"
#include "cusync/stage_view.cuh"

namespace cusync::cutlass_sm90 {
inline namespace CUSYNC_LOAD_ORDER_NAMESPACE {

// Where the A operand of a consumer GEMM comes from: the output of a producer stage with its own tile shape.
// A consumer tile (m, n) at k-block kb reads A rows [m*BM, (m+1)*BM) and columns [kb*BK, (kb+1)*BK), i.e. the
// producer tiles x in [kb*BK / producerTileN, ((kb+1)*BK - 1) / producerTileN], y likewise over rows.
template <class InputPolicy>
struct ProducedOperandA {
  InputView<InputPolicy> input;        // producer semaphores; unsynchronized when null
  std::uint32_t producerTileRows = 0;  // producer tile M (rows of A per producer tile)
  std::uint32_t producerTileColumns = 0;  // producer tile N (columns of A per producer tile)
  // PDL-only baseline: instead of per-tile semaphores, wait for the whole previous grid (griddepcontrol.wait)
  // before the first A load. With LoadOrder::WeightsFirst the B prologue is issued before that wait.
  bool waitForPriorGrid = false;
};

template <class BaseMainloop>
struct TileSyncMainloop : BaseMainloop {
  using typename BaseMainloop::MainloopPipeline;
  using typename BaseMainloop::PipelineState;
  using typename BaseMainloop::Params;
  using typename BaseMainloop::TensorStorage;
  using typename BaseMainloop::SmemLayoutA;
  using typename BaseMainloop::SmemLayoutB;
  using typename BaseMainloop::DispatchPolicy;
  using typename BaseMainloop::TileShape;
  static constexpr int Stages = DispatchPolicy::Stages;

  // The producer's acquire of a stage whose k-block brings `extraBytes` more than the pipeline's barriers expect:
  // the fused chain with a tile width per GEMM builds one pipeline for both, expecting the narrower GEMM's bytes,
  // and a unit of the wider one adds the difference. The extra is expected after the stage is free (its barrier is
  // then in the phase these copies complete) and before the producer's arrival: until that arrival the phase cannot
  // complete, whatever bytes a cluster peer's multicast has already delivered.
  CUTLASS_DEVICE static void acquireStage(MainloopPipeline& pipeline, PipelineState state, std::uint32_t extraBytes) {
    if (extraBytes != 0) {
      waitStageFree(pipeline, state);
      pipeline.producer_expect_transaction(state, extraBytes);
    }
    pipeline.producer_acquire(state);  // the stage is free: arrives, expecting the pipeline's bytes
  }

  // Waits until every stage the producer has filled, up to `state`, is released: the next Stages acquisitions would
  // not block. The fused chain with a tile width per GEMM needs it where its loads turn from one collective's
  // stage layout to the other's.
  CUTLASS_DEVICE static void waitAllStagesFree(MainloopPipeline& pipeline, PipelineState state) {
    for (int j = 0; j < Stages; ++j, ++state) waitStageFree(pipeline, state);
  }

  // Called by the whole TMA warp before loadSynchronized of a unit that reads A's k-blocks [kBegin, kBegin + kCount)
  // of tile row `tileRow`: the warp reads the semaphores of every producer tile those k-blocks cover at once
  // (warpPollPostedColumns: one round trip for up to 64 tiles) and returns the end of the prefix of producer columns
  // found posted, for loadSynchronized's knownPostedColumnsEnd; 0 where A waits for nothing. It never spins.
  // loadSynchronized then checks nothing at the k-blocks those columns cover (kKnownPostedEnd there).
  // Why: loadSynchronized checked A's producer tiles k-block by k-block on the one thread that issues every TMA copy,
  // between each stage's acquire and its copies. The two-launch pingpong GEMM, whose 6 stages of 128x128x64 leave
  // little slack, ran a third slower tile-synchronized than stream-ordered although nearly all of GEMM 2's blocks
  // started once GEMM 1's tiles were posted (block traces at M = 1024: GEMM 2's blocks took 24-58% longer from their
  // first MMA to their end, 0-8% with this path). Not the semaphore round trips: a warp-wide look that found every
  // tile posted, leaving only each k-block's range arithmetic, still ran 1.41-1.59x stream order; a build whose
  // consumers never waited ran at its speed (docs/BENCHMARKS.md, issue 12, session 37). The fused chain loads a
  // fully posted unit the same way (fused_chain_gemm_kernel.hpp). CUSYNC_DIAGNOSTIC_NO_UNIT_LOOK (diagnostic builds
  // only) restores the per-k-block path for every unit, to measure this.
  template <class InputPolicy>
  CUTLASS_DEVICE static std::uint32_t lookAtProducedA(ProducedOperandA<InputPolicy> const& produced, int tileRow,
                                                      int kBegin, int kCount, TileTicket const& ticket) {
#if defined(CUSYNC_DIAGNOSTIC_NO_UNIT_LOOK)
    return 0;
#else
    if (!produced.input.synchronized() || produced.waitForPriorGrid || kCount <= 0) return 0;
    constexpr std::uint32_t kTileM = cute::size<0>(TileShape{});
    constexpr std::uint32_t kTileK = cute::size<2>(TileShape{});
    const std::uint32_t firstRow = static_cast<std::uint32_t>(tileRow) * kTileM;
    const ProducerTileRange reads =
        producerTilesCovering(firstRow, firstRow + kTileM, static_cast<std::uint32_t>(kBegin) * kTileK,
                              static_cast<std::uint32_t>(kBegin + kCount) * kTileK, produced.producerTileRows,
                              produced.producerTileColumns, produced.input.producerGrid);
    return warpPollPostedColumns(produced.input, reads, ticket.tile.z, ticket.iteration);
#endif
  }

  // Same contract as BaseMainloop::load, plus the synchronization of A. In a cluster (the fused chain's 2x1 clusters,
  // whose blocks run tiles of one column and one k-range, fused_chain_gemm_kernel.hpp) each block issues its slice
  // of the shared operand with CUTLASS's multicast masks, exactly as BaseMainloop::load does; `blockRankInCluster`
  // is cute::block_rank_in_cluster(). Without clusters the masks are 0 and the slices whole.
  // `extraTransactionBytes`: bytes each k-block brings beyond what the pipeline's producer_acquire expects (the fused
  // chain with a tile width per GEMM: acquireStage).
  // `lastKBlocksBegin`, where not null: arrived on once, as the unit's last `lastKBlocksLead` k-blocks begin to issue
  // (at once for a shorter unit); a persistent kernel's scheduler warp draws the next unit then
  // (persistent_unit_handoff.hpp).
  template <class TensorA, class TensorB, class KTileIterator, class BlockCoord, class InputPolicy>
  CUTLASS_DEVICE void loadSynchronized(Params const& mainloop_params, MainloopPipeline pipeline,
                                       PipelineState smem_pipe_write,
                                       cute::tuple<TensorA, TensorB> const& load_inputs, BlockCoord const& blk_coord,
                                       KTileIterator k_tile_iter, int k_tile_count, TensorStorage& shared_tensors,
                                       ProducedOperandA<InputPolicy> const& produced, LoadOrder order,
                                       TileTicket const& ticket, StageView const& consumer,
                                       std::uint32_t knownPostedColumnsEnd = 0,
                                       std::uint32_t blockRankInCluster = 0,
                                       std::uint32_t extraTransactionBytes = 0,
                                       cutlass::arch::ClusterBarrier* lastKBlocksBegin = nullptr,
                                       int lastKBlocksLead = 0) {
    using namespace cute;
    if (!cute::elect_one_sync()) return;
    const int signalAt = max(0, k_tile_count - lastKBlocksLead);  // the unit's k-block (from 0) that arrives
    auto signalIfAt = [&](int i) {
      if (lastKBlocksBegin != nullptr && i == signalAt) lastKBlocksBegin->arrive();
    };
    if (k_tile_count <= 0) signalIfAt(signalAt);

    Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{});
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{});
    Tensor gA_mkl = get<0>(load_inputs);
    Tensor gB_nkl = get<1>(load_inputs);
    using ClusterShape = typename DispatchPolicy::ClusterShape;
    constexpr std::uint32_t kClusterX = size<0>(ClusterShape{});
    const std::uint32_t clusterM = blockRankInCluster % kClusterX, clusterN = blockRankInCluster / kClusterX;
    auto block_tma_a = mainloop_params.tma_load_a.get_slice(clusterN);
    auto block_tma_b = mainloop_params.tma_load_b.get_slice(clusterM);
    std::uint16_t mcastA = 0, mcastB = 0;
    if constexpr (cute::is_same_v<typename BaseMainloop::GmemTiledCopyA, SM90_TMA_LOAD_MULTICAST>) {
      auto blockLayout = Layout<ClusterShape>{};  // (m, n) -> block id
      for (int n = 0; n < size<1>(blockLayout); ++n) mcastA |= std::uint16_t(1u << blockLayout(clusterM, n, Int<0>{}));
    }
    if constexpr (cute::is_same_v<typename BaseMainloop::GmemTiledCopyB, SM90_TMA_LOAD_MULTICAST>) {
      auto blockLayout = Layout<ClusterShape>{};
      for (int m = 0; m < size<0>(blockLayout); ++m) mcastB |= std::uint16_t(1u << blockLayout(m, clusterN, Int<0>{}));
    }
    const int m_coord = get<0>(blk_coord);
    const int n_coord = get<1>(blk_coord);
    const int l_coord = get<3>(blk_coord);
    Tensor tAgA = block_tma_a.partition_S(gA_mkl(_, _, m_coord, _, l_coord));  // (TMA,TMA_M,TMA_K,k)
    Tensor tAsA = block_tma_a.partition_D(sA);                                  // (TMA,TMA_M,TMA_K,PIPE)
    Tensor tBgB = block_tma_b.partition_S(gB_nkl(_, _, n_coord, _, l_coord));  // (TMA,TMA_N,TMA_K,k)
    Tensor tBsB = block_tma_b.partition_D(sB);                                  // (TMA,TMA_N,TMA_K,PIPE)

    constexpr std::uint32_t kTileM = size<0>(TileShape{});
    constexpr std::uint32_t kTileK = size<2>(TileShape{});
    const std::uint32_t firstRow = static_cast<std::uint32_t>(m_coord) * kTileM;
    // The producer tiles of A's k-block `k`, clipped to the producer grid: rows past M, and columns past K in a
    // last, partial k-block, have no tile.
    auto producerTilesOf = [&](int kBegin, int kEnd) {
      return producerTilesCovering(firstRow, firstRow + kTileM, static_cast<std::uint32_t>(kBegin) * kTileK,
                                   static_cast<std::uint32_t>(kEnd) * kTileK, produced.producerTileRows,
                                   produced.producerTileColumns, produced.input.producerGrid);
    };
    // Looks ahead over the whole k-range of this unit (producer_range_wait.cuh): one round trip per unit, not one
    // per producer tile, when the producer is ahead.
    // knownPostedColumnsEnd: a warp-wide look (warpPollPostedColumns) already found these columns posted; this
    // thread, which issues the TMA loads, owes them the proxy fence.
    const ProducerTileRange unitReads = producerTilesOf(*k_tile_iter, *k_tile_iter + k_tile_count);
    ProducerRangeWait<InputPolicy> rangeWait(produced.input, unitReads, ticket.tile.z, ticket.iteration,
                                             knownPostedColumnsEnd);
    if (knownPostedColumnsEnd != 0) fenceProxyAsyncGlobal();
    // The k-blocks before kKnownPostedEnd read only producer columns known posted (or A is unsynchronized): their
    // check is this one comparison, not the k-block's producer-tile range (runtime divisions) between the stage's
    // acquire and its copies, which cost the two-launch pingpong GEMM 1.41-1.59x its stream order even with every
    // tile known posted (lookAtProducedA). Checked here, in the one load loop, rather than by the caller choosing an
    // unsynchronized operand at run time: the operand, then possibly a local, was read from local memory at every
    // k-block, and even the stream-ordered pingpong chain ran 8-9% slower (docs/BENCHMARKS.md, issue 12, session 37,
    // calls 10-11).
    const int kUnitEnd = *k_tile_iter + k_tile_count;
    const int kKnownPostedEnd =
        produced.input.synchronized()
            ? kBlocksWithinPostedColumns(knownPostedColumnsEnd, unitReads, produced.producerTileColumns, kTileK,
                                         *k_tile_iter, kUnitEnd)
            : kUnitEnd;

    // Waits until every producer tile that A's k-block `k` overlaps has been posted, and orders the TMA loads
    // (async proxy) after the acquire (generic proxy).
    bool priorGridWaited = false;
    auto waitForA = [&](int k) {
      if (produced.waitForPriorGrid && !priorGridWaited) {
        asm volatile("griddepcontrol.wait;" ::: "memory");
        priorGridWaited = true;
      }
      if (k < kKnownPostedEnd) return;
      rangeWait.waitFor(producerTilesOf(k, k + 1), consumer, ticket.tile);
    };

    using BarrierType = typename MainloopPipeline::ProducerBarrierType;
    const int firstK = *k_tile_iter;

    if (order == LoadOrder::WaitThenLoad) {
      // The two tile loads of a k-block are annotated for cusync-tile-rewriter: built through it (the "+R" GEMMs of
      // examples/gemm), the load of B, which waits for nothing, is issued before the wait for A.
      CUTLASS_PRAGMA_NO_UNROLL
      for (int i = 0; i < k_tile_count; ++i) {
        signalIfAt(i);
        acquireStage(pipeline, smem_pipe_write, extraTransactionBytes);
        BarrierType* tma_barrier = pipeline.producer_get_barrier(smem_pipe_write);
        const int stage = smem_pipe_write.index();
        // Both loads complete on the stage's barrier. It is bound here, outside the annotated loads: the rewriter
        // keeps a load below the wait when it reads anything the waiting load reads after its wait (it cannot tell
        // the barrier from produced data), so the load of B must not read the barrier itself.
        auto tma_copy_a = mainloop_params.tma_load_a.with(*tma_barrier, mcastA);
        auto tma_copy_b = mainloop_params.tma_load_b.with(*tma_barrier, mcastB);
#pragma tile
        {
          waitForA(*k_tile_iter);
          copy(tma_copy_a, tAgA(_, _, _, *k_tile_iter), tAsA(_, _, _, stage));
        }
#pragma tile
        copy(tma_copy_b, tBgB(_, _, _, *k_tile_iter), tBsB(_, _, _, stage));
        ++k_tile_iter;
        ++smem_pipe_write;
      }
      return;
    }

    // WeightsFirst ("R"): B never waits, so it goes first. Each stage's barrier expects the bytes of A and B
    // together (producer_acquire sets them), so the two may land in either order.
    //  * Prologue: B of the first `Stages` k-blocks is issued into all (initially free) stages before the first
    //    blocking wait, so the weights stream in while the block still waits for its first A tile. A k-block whose
    //    A tiles are already posted (a look at the semaphores that never blocks) gets its A right after its B: the
    //    A of a unit's first k-block must not wait for the whole prologue when nothing is to be waited for (the
    //    math warps idle meanwhile; measured as a few percent of the fused chain at M = 4096).
    //  * Then A of the prologue's remaining k-blocks, each after its wait; the pipeline is now as full as
    //    CUTLASS's own.
    //  * Steady state: per k-block, acquire the stage, issue B, wait, issue A. The acquire needs the math warps to
    //    free the stage of k-block i - Stages, which needs A of k-blocks up to i - Stages + K_PIPE_MMAS < i,
    //    all issued already: no deadlock.
    const int prologue = min(k_tile_count, Stages);
    PipelineState a_write = smem_pipe_write;
    int aIssued = 0;  // A of the prologue's first aIssued k-blocks is issued
    for (int i = 0; i < prologue; ++i) {
      signalIfAt(i);
      acquireStage(pipeline, smem_pipe_write, extraTransactionBytes);
      BarrierType* tma_barrier = pipeline.producer_get_barrier(smem_pipe_write);
      copy(mainloop_params.tma_load_b.with(*tma_barrier, mcastB), tBgB(_, _, _, firstK + i),
           tBsB(_, _, _, smem_pipe_write.index()));
      if (aIssued == i && !produced.waitForPriorGrid &&
          (firstK + i < kKnownPostedEnd ||
           rangeWait.postedWithoutWaiting(producerTilesOf(firstK + i, firstK + i + 1)))) {
        copy(mainloop_params.tma_load_a.with(*tma_barrier, mcastA), tAgA(_, _, _, firstK + i),
             tAsA(_, _, _, smem_pipe_write.index()));
        ++aIssued;
        ++a_write;
      }
      ++smem_pipe_write;
    }
    for (int i = aIssued; i < prologue; ++i) {
      waitForA(firstK + i);
      copy(mainloop_params.tma_load_a.with(*pipeline.producer_get_barrier(a_write), mcastA), tAgA(_, _, _, firstK + i),
           tAsA(_, _, _, a_write.index()));
      ++a_write;
    }
    CUTLASS_PRAGMA_NO_UNROLL
    for (int i = prologue; i < k_tile_count; ++i) {
      signalIfAt(i);
      acquireStage(pipeline, smem_pipe_write, extraTransactionBytes);
      BarrierType* tma_barrier = pipeline.producer_get_barrier(smem_pipe_write);
      const int stage = smem_pipe_write.index();
      copy(mainloop_params.tma_load_b.with(*tma_barrier, mcastB), tBgB(_, _, _, firstK + i), tBsB(_, _, _, stage));
      waitForA(firstK + i);
      copy(mainloop_params.tma_load_a.with(*tma_barrier, mcastA), tAgA(_, _, _, firstK + i), tAsA(_, _, _, stage));
      ++smem_pipe_write;
    }
  }
};

}  // namespace CUSYNC_LOAD_ORDER_NAMESPACE
}  // namespace cusync::cutlass_sm90
