// The attention chain's GEMM registry (attention_gemms.h).
#include "attention_gemms.h"

#include <algorithm>

namespace cusync::examples::attention {

std::vector<AttentionGemm>& attentionGemms() {
  static std::vector<AttentionGemm> gemms;
  return gemms;
}

std::vector<const AttentionGemm*> findAttentionGemms(Model model, Phase phase, GemmRole role, TPolicyKind tPolicy,
                                                     const std::vector<std::string>& only) {
  std::vector<const AttentionGemm*> found;
  for (const AttentionGemm& gemm : attentionGemms())
    if (gemm.model == model && gemm.phase == phase && gemm.role == role &&
        (role == GemmRole::Qkv || gemm.tPolicy == tPolicy) &&
        (only.empty() || std::find(only.begin(), only.end(), gemm.configuration) != only.end()))
      found.push_back(&gemm);
  // Static initialization runs the translation units in no particular order: the list's order is the rank.
  std::sort(found.begin(), found.end(), [](const AttentionGemm* a, const AttentionGemm* b) { return a->rank < b->rank; });
  return found;
}

bool isAttentionGemmConfiguration(const std::string& configuration) {
  for (const AttentionGemm& gemm : attentionGemms())
    if (gemm.configuration == configuration) return true;
  return false;
}

}  // namespace cusync::examples::attention
