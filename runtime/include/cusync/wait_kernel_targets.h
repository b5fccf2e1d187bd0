// Which stages a stage's wait-kernels must wait for when some stages of a chain leave their wait-kernels out (the
// paper's "avoid wait-kernel"). Host code, no CUDA: the chain executor (chain_executor.cuh) uses it.
//
// Why not just the direct producers: a wait-kernel guarantees that every block the consumer may wait for has
// started, so the consumer's blocks can never take a slot such a block still needs. If a producer P left its own
// wait-kernels out, P's blocks may all have started while P's producers still have unstarted blocks; a consumer
// that waited only for P would then launch, its blocks could fill the slots those unstarted blocks need, and P's
// spinning blocks would never be released (e.g. LLaMA: GEMM 1 -> SwiGLU without wait-kernel -> GEMM 2 with one). So a
// wait-kernel also waits, through every producer that has none, for that producer's producers, transitively.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace cusync {

// `producersOf(s)`: the stages stage s waits on directly (indices into the chain, producers before consumers);
// `keepsWaitKernels(s)`: whether stage s is launched behind its own wait-kernels. Returns the stages stage `s`'s
// wait-kernels wait for, each once, in ascending order.
inline std::vector<std::size_t> waitKernelTargets(
    std::size_t s, const std::function<std::vector<std::size_t>(std::size_t)>& producersOf,
    const std::function<bool(std::size_t)>& keepsWaitKernels) {
  std::vector<std::size_t> targets;
  std::vector<std::size_t> pending = producersOf(s);
  while (!pending.empty()) {
    const std::size_t p = pending.back();
    pending.pop_back();
    if (std::find(targets.begin(), targets.end(), p) != targets.end()) continue;
    targets.push_back(p);
    // P's blocks may have started before its own producers' blocks: wait for those too.
    if (!keepsWaitKernels(p))
      for (std::size_t q : producersOf(p)) pending.push_back(q);
  }
  std::sort(targets.begin(), targets.end());
  return targets;
}

}  // namespace cusync
