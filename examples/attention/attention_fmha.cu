// The prompt attention stage on CUTLASS's Hopper flash attention: the launch functions of attention_fmha.h, one per
// model, T policy and QKV tiling. CUTLASS's arguments are built per launch (they hold TMA descriptors of the chain's
// buffers; a CUDA graph captures them once).
#include "attention_fmha.h"

#include <string>

#include "attention_fmha_kernel.cuh"
#include "cusync/error.h"

namespace cusync::examples::attention {
inline namespace CUSYNC_FMHA_BUILD_NAMESPACE {
namespace {

typename PromptFmha::Kernel::Params promptFmhaParams(const PromptFmhaLaunch& l) {
  using namespace cute;
  using Kernel = PromptFmha::Kernel;
  using Element = PromptFmha::Element;
  const int batch = int(l.batch), heads = int(l.kernel.heads), sequence = int(l.kernel.sequenceLength);
  const int headDim = detail::kFmhaHeadDim;
  const int qkvColumns = 3 * heads * headDim, tColumns = heads * headDim;
  // Q, K and V of head h are columns [h*128, +128) of their thirds of a QKV row; a sequence is S rows.
  const PromptFmha::Stride qkvStride = make_stride(qkvColumns, _1{}, make_stride(sequence * qkvColumns, headDim));
  const PromptFmha::Stride tStride = make_stride(tColumns, _1{}, make_stride(sequence * tColumns, headDim));
  const PromptFmha::LseStride lseStride = make_stride(_1{}, make_stride(heads * sequence, sequence));
  const auto* qkv = reinterpret_cast<const Element*>(l.kernel.qkv);
  typename Kernel::Arguments arguments{
      make_tuple(batch, heads, sequence, sequence, headDim),
      {qkv, qkvStride, qkv + heads * headDim, qkvStride, qkv + 2 * heads * headDim, qkvStride},
      {reinterpret_cast<Element*>(l.t), tStride, l.lse, lseStride},
      cutlass::KernelHardwareInfo{}};
  if (!Kernel::can_implement(arguments))
    throw Error("attention_example: CUTLASS's flash attention cannot run B = " + std::to_string(batch) +
                ", S = " + std::to_string(sequence));
  return Kernel::to_underlying_arguments(arguments, nullptr);
}

}  // namespace

template <Model M, TPolicyKind K, QkvTiling Q>
void launchPromptFmha(const PromptFmhaLaunch& l,
                      TypedStageView<typename Policies<M, Phase::Prompt>::template T<K>> stage,
                      InputView<typename QkvPolicies<M, Phase::Prompt, Q>::Producer> input, cudaStream_t stream,
                      LaunchOrdering ordering) {
  using TPolicy = typename Policies<M, Phase::Prompt>::template T<K>;
  using QkvPolicy = typename QkvPolicies<M, Phase::Prompt, Q>::Producer;
  auto* kernel = &promptFmhaKernel<QkvPolicy, TPolicy>;
  static const bool sharedMemoryRaised = [kernel] {
    CUSYNC_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, PromptFmha::kSharedBytes));
    return true;
  }();
  (void)sharedMemoryRaised;
  if (l.kernel.sequenceLength % detail::kFmhaQueries != 0)
    throw Error("attention_example: the flash attention stage needs S a multiple of 128");
  launchKernel(kernel, dim3(l.blocks), dim3(PromptFmha::kThreads), std::size_t(PromptFmha::kSharedBytes), stream,
               ordering, promptFmhaParams(l), stage, input, l.kernel);
}

#define CUSYNC_INSTANTIATE_PROMPT_FMHA(MODEL, KIND, TILING)                                                   \
  template void launchPromptFmha<Model::MODEL, TPolicyKind::KIND, QkvTiling::TILING>(                        \
      const PromptFmhaLaunch&, TypedStageView<Policies<Model::MODEL, Phase::Prompt>::T<TPolicyKind::KIND>>,   \
      InputView<QkvPolicies<Model::MODEL, Phase::Prompt, QkvTiling::TILING>::Producer>, cudaStream_t,        \
      LaunchOrdering);
CUSYNC_INSTANTIATE_PROMPT_FMHA(Gpt3, TileSync, HeadWide)
CUSYNC_INSTANTIATE_PROMPT_FMHA(Gpt3, RowSync, HeadWide)
CUSYNC_INSTANTIATE_PROMPT_FMHA(Llama, TileSync, HeadWide)
CUSYNC_INSTANTIATE_PROMPT_FMHA(Llama, RowSync, HeadWide)
CUSYNC_INSTANTIATE_PROMPT_FMHA(Gpt3, TileSync, Narrow)
CUSYNC_INSTANTIATE_PROMPT_FMHA(Gpt3, RowSync, Narrow)
CUSYNC_INSTANTIATE_PROMPT_FMHA(Llama, TileSync, Narrow)
CUSYNC_INSTANTIATE_PROMPT_FMHA(Llama, RowSync, Narrow)
CUSYNC_INSTANTIATE_PROMPT_FMHA(Gpt3, TileSync, Wide)
CUSYNC_INSTANTIATE_PROMPT_FMHA(Gpt3, RowSync, Wide)
#undef CUSYNC_INSTANTIATE_PROMPT_FMHA

}  // namespace CUSYNC_FMHA_BUILD_NAMESPACE
}  // namespace cusync::examples::attention
