// What the token-generation chain asks L2 to fetch before its consumers wait (attention_example's
// --decode-l2-prefetch): the attention stage's cached keys and values, the packed output GEMV's weights, both or
// neither. Both are read only after a wait but depend on nothing the chain computes, so a consumer resident while its
// producer still runs can have them fetched while DRAM would otherwise idle. Measured on the H200 with the driver's
// carveout (docs/BENCHMARKS.md, issue 14, session 33): neither gained, the weights cost 2.7 us at GPT-3 4 x 1024;
// the default is none. Host code.
#pragma once

#include <string>

namespace cusync::examples::attention {

struct DecodeL2Prefetch {
  bool cache = false;    // DecodeAttentionArgs::prefetchCacheToL2
  bool weights = false;  // the packed output stage's GemmLaunchArgs::l2PrefetchAheadGroups
};

// "none", "cache", "weights" or "both"; anything else: false, `out` untouched.
inline bool parseDecodeL2Prefetch(const std::string& text, DecodeL2Prefetch& out) {
  if (text == "none") out = {false, false};
  else if (text == "cache") out = {true, false};
  else if (text == "weights") out = {false, true};
  else if (text == "both") out = {true, true};
  else return false;
  return true;
}

}  // namespace cusync::examples::attention
