// One GEMM of the attention chain (hooked_gemm.cuh) under the policies cusyncgen proved for it, registered in
// attention_gemms.h. Included by exactly one translation unit per instantiation. Device + host code.
#pragma once

#include <string>
#include <type_traits>

#include "attention_gemms.h"
#include "attention_policies.h"
#include "hooked_gemm.cuh"

namespace cusync::examples::attention {

// The tile configuration of each phase, which is also the spec's: prompt processing (B*S = 512 .. 2048 rows)
// 128 x 128 x 64 tiles with two math warp groups, as the GPT-3 MLP at M >= 256; token generation (B rows) the
// persistent 64 x 128 x 128 kernel, split along K to fill the GPU (docs/GPU_NOTES.md: at small M is bytes in flight).
template <Phase P>
struct PhaseGemmConfig;
template <>
struct PhaseGemmConfig<Phase::Prompt> {
  static constexpr int tileM = 128, tileN = 128, tileK = 64, stages = 4, minBlocksPerSm = 1;
  static constexpr bool cooperative = true, persistent = false;
};
template <>
struct PhaseGemmConfig<Phase::Decode> {
  static constexpr int tileM = 64, tileN = 128, tileK = 128, stages = 4, minBlocksPerSm = 1;
  static constexpr bool cooperative = false, persistent = true;
};

template <Model M, Phase P, GemmRole R, TPolicyKind K>
struct AttentionGemmInstance {
  using Config = PhaseGemmConfig<P>;
  using ChainPolicies = Policies<M, P>;
  // The QKV GEMM reads X, which nothing produces (its input policy is never used: no producer semaphores), and
  // posts under StridedSync; the output GEMM waits for T and posts nothing (nobody waits on Y).
  using InputPolicy = std::conditional_t<R == GemmRole::Qkv, typename ChainPolicies::QkvStrided,
                                         typename ChainPolicies::template T<K>>;
  using OutputPolicy = std::conditional_t<R == GemmRole::Qkv, typename ChainPolicies::QkvStrided, cusync::TileSync>;
  using Gemm = HookedGemm<Config::tileM, Config::tileN, Config::tileK, Config::stages, Config::cooperative,
                          Config::minBlocksPerSm, Config::persistent, Activation::Identity, InputPolicy,
                          OutputPolicy>;
  static_assert(Config::tileN == 128, "one head is one 128-wide column tile (the specs' TileN)");

  static AttentionGemm entry() {
    const std::string name = std::string(M == Model::Gpt3 ? "gpt3" : "llama") + "_" +
                              (P == Phase::Decode ? "decode" : "prompt") + "_" +
                              (R == GemmRole::Qkv ? "qkv" : std::string("out_in") + tPolicyName(K)) + "_" +
                              std::to_string(Config::tileM) + "x" + std::to_string(Config::tileN) + "x" +
                              std::to_string(Config::tileK);
    return AttentionGemm{name,
                         M,
                         P,
                         R,
                         K,
                         GemmTileShape{Config::tileM, Config::tileN, Config::tileK},
                         Config::persistent,
                         &Gemm::tileGrid,
                         &Gemm::maxActiveBlocksPerSm,
                         &Gemm::launch};
  }
};

}  // namespace cusync::examples::attention

// One registration per translation unit.
#define CUSYNC_REGISTER_ATTENTION_GEMM(MODEL, PHASE, ROLE, POLICY)                                          \
  namespace {                                                                                             \
  using namespace ::cusync::examples::attention;                                                          \
  const AttentionGemmRegistration registration{                                                           \
      AttentionGemmInstance<Model::MODEL, Phase::PHASE, GemmRole::ROLE, TPolicyKind::POLICY>::entry()}; \
  }
