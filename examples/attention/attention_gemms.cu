// The attention chain's GEMM registry (attention_gemms.h).
#include "attention_gemms.h"

#include "cusync/error.h"

namespace cusync::examples::attention {

std::vector<AttentionGemm>& attentionGemms() {
  static std::vector<AttentionGemm> gemms;
  return gemms;
}

const AttentionGemm& findAttentionGemm(Model model, Phase phase, GemmRole role, TPolicyKind tPolicy) {
  for (const AttentionGemm& gemm : attentionGemms())
    if (gemm.model == model && gemm.phase == phase && gemm.role == role &&
        (role == GemmRole::Qkv || gemm.tPolicy == tPolicy))
      return gemm;
  throw cusync::Error(std::string("attention: no ") + (role == GemmRole::Qkv ? "QKV" : "output") + " GEMM for " +
                      (model == Model::Gpt3 ? "gpt3" : "llama") + " " +
                      (phase == Phase::Decode ? "decode" : "prompt") +
                      (role == GemmRole::Output ? std::string(" waiting under ") + tPolicyName(tPolicy) : "") +
                      " in this build");
}

}  // namespace cusync::examples::attention
