// The stages a stage's wait-kernels wait for (runtime/include/cusync/wait_kernel_targets.h): its producers, plus,
// through every producer that leaves its own wait-kernels out, that producer's producers.
#include <cstddef>
#include <vector>

#include <catch2/catch.hpp>

#include "cusync/wait_kernel_targets.h"

using cusync::waitKernelTargets;

namespace {
struct Chain {
  std::vector<std::vector<std::size_t>> producers;
  std::vector<bool> keeps;  // stage keeps its wait-kernels
  std::vector<std::size_t> targets(std::size_t s) const {
    return waitKernelTargets(
        s, [&](std::size_t t) { return producers[t]; }, [&](std::size_t t) { return bool(keeps[t]); });
  }
};
using Targets = std::vector<std::size_t>;
}  // namespace

TEST_CASE("wait-kernel targets: a chain whose stages all keep their wait-kernels waits for direct producers only",
          "[wait_kernel]") {
  // LLaMA's MLP: GEMM 1 (0) -> SwiGLU (1) -> GEMM 2 (2).
  const Chain llama{{{}, {0}, {1}}, {false, true, true}};
  REQUIRE(llama.targets(1) == Targets{0});
  REQUIRE(llama.targets(2) == Targets{1});
}

TEST_CASE("wait-kernel targets: behind a producer without wait-kernels, its producers are waited for too",
          "[wait_kernel]") {
  // SwiGLU leaves its wait-kernel out (GEMM 1 and SwiGLU fit together), GEMM 2 keeps its own: GEMM 2 must not launch
  // while GEMM 1 still has blocks to start, or its blocks could take their slots while SwiGLU's blocks spin.
  const Chain llama{{{}, {0}, {1}}, {false, false, true}};
  REQUIRE(llama.targets(2) == Targets{0, 1});
  // Transitively, across two stages without wait-kernels, and once per stage in a diamond.
  const Chain longer{{{}, {0}, {1}, {2}}, {false, false, false, true}};
  REQUIRE(longer.targets(3) == Targets{0, 1, 2});
  const Chain diamond{{{}, {0}, {0}, {1, 2}}, {false, false, false, true}};
  REQUIRE(diamond.targets(3) == Targets{0, 1, 2});
  // A producer that keeps its wait-kernels already waited for its own producers: nothing is added through it.
  const Chain kept{{{}, {0}, {1}, {2}}, {false, true, false, true}};
  REQUIRE(kept.targets(3) == Targets{1, 2});
}
