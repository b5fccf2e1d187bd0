// A policy whose value is too high makes consumers wait for posts that never come. With the debug watchdog on
// (this binary is built with CUSYNC_WAIT_TIMEOUT_NS = 200 ms) the spin traps with a message naming the waiting
// stage, its tile, the producer tile, the semaphore, the value seen and the value expected, instead of hanging.
// A trap ruins the CUDA context, so each deadlocking run happens in a child process (this same binary, running a
// hidden test case) and the visible test case checks the child's exit status and output.
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>

#include <unistd.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include "broken_policies.h"
#include "cusync/cusync.cuh"
#include "scenarios.cuh"
#include "shapes.h"

using namespace cusync;
using namespace cusync::gpu_test;
using Catch::Matchers::Contains;

namespace {

struct ChildResult {
  int exitStatus = -1;  // the child's exit code, or -1 if it did not exit normally
  std::string output;   // stdout and stderr together
};

// Runs this binary with a Catch2 test name and returns its exit code and output.
ChildResult runChild(const std::string& testName) {
  std::array<char, 4096> self{};
  const ssize_t length = readlink("/proc/self/exe", self.data(), self.size() - 1);
  REQUIRE(length > 0);
  const std::string command = "'" + std::string(self.data(), length) + "' '" + testName + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  ChildResult result;
  std::array<char, 4096> chunk{};
  while (std::size_t read = fread(chunk.data(), 1, chunk.size(), pipe)) result.output.append(chunk.data(), read);
  const int status = pclose(pipe);
  if (status != -1 && WIFEXITED(status)) result.exitStatus = WEXITSTATUS(status);
  return result;
}

// The deadlocking run: a pair under ValueTooHigh<Policy> with programmatic launch; synchronizing must fail.
template <class Policy, class Dependency>
void runTooHighPair() {
  PairScenario<ValueTooHigh<Policy>, Dependency> pair(oneWaveShape(), StageOrdering::ProgrammaticLaunch, 1);
  Stream stream;
  pair.pipeline().enqueueIteration(stream);
  REQUIRE_THROWS_AS(stream.synchronize(), Error);
}

}  // namespace

TEST_CASE("watchdog child: TileSync with value 2", "[.watchdog-child]") { runTooHighPair<TilePolicy, SameTile>(); }
TEST_CASE("watchdog child: RowSync with value X + 1", "[.watchdog-child]") { runTooHighPair<RowPolicy, WholeRow>(); }

TEST_CASE("a TileSync policy whose value is too high traps in the watchdog, naming stage, tile and semaphore",
          "[watchdog]") {
  const ChildResult child = runChild("watchdog child: TileSync with value 2");
  INFO("child output:\n" << child.output);
  // The child's own test passed: synchronizing after the trap reported an error instead of hanging.
  REQUIRE(child.exitStatus == 0);
  CHECK_THAT(child.output, Contains("cusync watchdog: stage 'consumer' tile ("));
  CHECK_THAT(child.output, Contains("for producer tile ("));
  // TileSync: one post per semaphore per iteration; a consumer in iteration 0 waiting for 2 sees 1.
  CHECK_THAT(child.output, Contains(": semaphore ") && Contains(" is 1, expected 2"));
}

TEST_CASE("a RowSync policy whose value is too high traps in the watchdog with the row's count", "[watchdog]") {
  const ChildResult child = runChild("watchdog child: RowSync with value X + 1");
  INFO("child output:\n" << child.output);
  REQUIRE(child.exitStatus == 0);
  const std::uint32_t rowLength = oneWaveShape().producerGrid.x;
  CHECK_THAT(child.output, Contains("cusync watchdog: stage 'consumer' tile ("));
  CHECK_THAT(child.output, Contains(" is " + std::to_string(rowLength) + ", expected " +
                                    std::to_string(rowLength + 1)));
}
