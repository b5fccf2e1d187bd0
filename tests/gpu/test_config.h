// Run-time knobs shared by the GPU tests. Host code.
//   CUSYNC_GPU_TEST_SMALL=1   small grids, few iterations and replays: for compute-sanitizer runs, which are slow
//   CUSYNC_GPU_TEST_SEED=N    reproduce a run's random delays and salts (each test prints the seed it used)
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

namespace cusync::gpu_test {

inline bool smallMode() {
  const char* value = std::getenv("CUSYNC_GPU_TEST_SMALL");
  return value != nullptr && *value != '\0' && *value != '0';
}

// Picks `full` normally and `small` in small mode.
template <class T>
T scaled(T full, T small) {
  return smallMode() ? small : full;
}

inline std::uint32_t testSeed() {
  if (const char* value = std::getenv("CUSYNC_GPU_TEST_SEED")) return static_cast<std::uint32_t>(std::strtoul(value, nullptr, 0));
  return std::random_device{}();
}

// One delay per tile, uniform in [0, maxNanoseconds]: tiles finish out of order and at varying times.
inline std::vector<std::uint32_t> randomDelays(std::size_t tiles, std::uint32_t maxNanoseconds, std::mt19937& random) {
  std::uniform_int_distribution<std::uint32_t> delay(0, maxNanoseconds);
  std::vector<std::uint32_t> delays(tiles);
  for (auto& d : delays) d = delay(random);
  return delays;
}

}  // namespace cusync::gpu_test
