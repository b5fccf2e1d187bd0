// The pipelines CUTLASS's sm90 collectives run on, for the warp roles every hooked cusync GEMM kernel has (one tile
// per block, persistent, fused chain): the TMA producer warp loads the operands, an epilogue producer warp would
// load C, the math warp groups consume both. Every thread constructs them; a block barrier must follow before first
// use. Device code; needs CUTLASS.
#pragma once

#include <cstdint>

#include <cute/arch/cluster_sm90.hpp>
#include <cutlass/pipeline/pipeline.hpp>

namespace cusync::cutlass_sm90 {

// Waits, as a producer, until stage `state` of a TMA pipeline is released by its consumers, without arriving on it:
// for a producer thread whose loads complete on a barrier another thread arms (the fused chain's extra bytes, the
// convolution's activation thread).
template <class MainloopPipeline>
CUTLASS_DEVICE void waitStageFree(MainloopPipeline& pipeline, typename MainloopPipeline::PipelineState state) {
  while (pipeline.producer_try_acquire(state).get() != cutlass::BarrierStatus::WaitDone) {
  }
}

template <class MainloopPipeline, class EpiLoadPipeline, class EpiStorePipeline>
struct KernelPipelines {
  MainloopPipeline mainloop;
  EpiLoadPipeline epiLoad;
  EpiStorePipeline epiStore;
};

// The epilogue's C-load pipeline alone, as makeKernelPipelines builds it: `transactionBytes` per C load (0 when the
// epilogue loads no C). The fused chain builds a second one when its GEMMs' epilogues have different types of it.
template <class CollectiveEpilogue, int NumMmaThreads, class Storage>
CUTLASS_DEVICE typename CollectiveEpilogue::LoadPipeline makeEpilogueLoadPipeline(Storage& storage,
                                                                                 std::uint32_t transactionBytes,
                                                                                 bool isEpilogueProducer, bool isMath) {
  using EpiLoadPipeline = typename CollectiveEpilogue::LoadPipeline;
  typename EpiLoadPipeline::Params params;
  if (isEpilogueProducer) params.role = EpiLoadPipeline::ThreadCategory::Producer;
  if (isMath) params.role = EpiLoadPipeline::ThreadCategory::Consumer;
  // A consumer release arrives on block dst_blockid's barrier: this block's own (CUTLASS's kernels set the same;
  // 0 would be another block's in a cluster).
  params.dst_blockid = cute::block_rank_in_cluster();
  params.producer_arv_count = cutlass::NumThreadsPerWarp;
  params.consumer_arv_count = NumMmaThreads;
  if constexpr (CollectiveEpilogue::RequiresTransactionBytes) params.transaction_bytes = transactionBytes;
  return EpiLoadPipeline(storage, params);
}

// The mainloop's pipeline alone, as makeKernelPipelines builds it: `transactionBytes` per k-block (A and B). The
// fused chain builds a second one when its GEMMs have different stage counts.
template <class CollectiveMainloop, int NumMmaThreads, class Storage>
CUTLASS_DEVICE typename CollectiveMainloop::MainloopPipeline makeMainloopPipeline(Storage& storage,
                                                                                 std::uint32_t transactionBytes,
                                                                                 bool isMainloopProducer, bool isMath,
                                                                                 int warp_group_thread_idx) {
  using MainloopPipeline = typename CollectiveMainloop::MainloopPipeline;
  typename MainloopPipeline::Params params;
  if (isMainloopProducer) params.role = MainloopPipeline::ThreadCategory::Producer;
  if (isMath) params.role = MainloopPipeline::ThreadCategory::Consumer;
  params.is_leader = warp_group_thread_idx == 0;
  params.num_consumers = NumMmaThreads;
  params.transaction_bytes = transactionBytes;
  return MainloopPipeline(storage, params, typename CollectiveMainloop::DispatchPolicy::ClusterShape{});
}

// `mainloopTransactionBytes`: the bytes TMA brings per k-block (A and B); `epilogueParams`: the epilogue's, for the
// bytes per C load when the epilogue needs them.
template <class CollectiveMainloop, class CollectiveEpilogue, int NumMmaThreads, class PipelineStorage,
          class EpilogueParams>
CUTLASS_DEVICE KernelPipelines<typename CollectiveMainloop::MainloopPipeline, typename CollectiveEpilogue::LoadPipeline,
                               typename CollectiveEpilogue::StorePipeline>
makeKernelPipelines(PipelineStorage& storage, std::uint32_t mainloopTransactionBytes,
                    EpilogueParams const& epilogueParams, bool isMainloopProducer, bool isEpilogueProducer,
                    bool isMath, int warp_group_thread_idx) {
  using EpiStorePipeline = typename CollectiveEpilogue::StorePipeline;

  std::uint32_t epilogueTransactionBytes = 0;
  if constexpr (CollectiveEpilogue::RequiresTransactionBytes)
    epilogueTransactionBytes = epilogueParams.tma_transaction_bytes;

  typename EpiStorePipeline::Params epi_store_pipeline_params;
  epi_store_pipeline_params.always_wait = true;
  return {makeMainloopPipeline<CollectiveMainloop, NumMmaThreads>(storage.mainloop, mainloopTransactionBytes,
                                                                  isMainloopProducer, isMath, warp_group_thread_idx),
          makeEpilogueLoadPipeline<CollectiveEpilogue, NumMmaThreads>(storage.epi_load, epilogueTransactionBytes,
                                                                      isEpilogueProducer, isMath),
          EpiStorePipeline(epi_store_pipeline_params)};
}

}  // namespace cusync::cutlass_sm90
