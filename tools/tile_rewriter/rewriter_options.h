// What the user tells the rewriter about the functions its kernels call. Names are matched against the unqualified
// name of the callee (`stage.wait(...)`, `cusync::wait(...)` and `policy.wait(...)` all have the name `wait`).
#pragma once

#include <set>
#include <string>

namespace cusync::tile_rewriter {

struct RewriterOptions {
  // A call to one of these makes its statement a "waiting" tile load; waiting loads are issued after the others.
  // By default the cusync runtime's own waits (block_sync.cuh, stage_view.cuh, semaphore.cuh) and any `wait`.
  std::set<std::string> waitFunctions{"wait", "blockWait", "waitThread", "waitThreadCached", "spinUntilReached"};
  // Functions that read their arguments' values only (no memory access, no side effects): like
  // __attribute__((annotate("cusync_pure"))) or __attribute__((const)) on the declaration.
  std::set<std::string> pureFunctions;
  // Functions that access memory only through their pointer and reference arguments (and their object):
  // like __attribute__((annotate("cusync_args_only"))) on the declaration.
  std::set<std::string> argsOnlyFunctions;
};

}  // namespace cusync::tile_rewriter
