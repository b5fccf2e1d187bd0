// A group of `#pragma tile` statements as the property test sees it: for each statement, whether it waits, and the
// memory it reads and writes, by name. The random generator builds these, renders them as CUDA
// (group_rendering.h) and the legality oracle (legality_oracle.h) judges the rewriter's output against them; neither
// uses the rewriter's own analysis.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace cusync::rewriter_test {

// One operation: the C++ it renders as (one statement, no trailing ';') and the memory it reads and writes.
struct Operation {
  std::string code;
  std::set<std::string> reads;
  std::set<std::string> writes;
};

struct ModelStatement {
  bool waits = false;
  std::string waitArgument;              // a waiting statement starts with `stage.wait(<waitArgument>);`
  std::set<std::string> waitArgumentReads;  // memory the wait's argument reads (before the wait)
  std::vector<Operation> operations;     // after the wait, for a waiting statement

  std::set<std::string> reads() const;   // everything it reads, the wait's argument included
  std::set<std::string> writes() const;
  // What its wait may guard: global memory it reads after the wait and not in the wait's argument (the thread
  // reads that before the wait, so the wait is not what makes it visible). Empty for a statement that does not wait.
  std::set<std::string> guarded(const std::set<std::string>& globalMemory) const;
};

struct ModelGroup {
  std::vector<ModelStatement> statements;  // in source order
  // The memory names that may hold a producer's data (global memory: what kernel pointer arguments point to, global
  // variables); the others (__shared__ arrays, a thread's local values) no other kernel can write.
  std::set<std::string> globalMemory;
};

}  // namespace cusync::rewriter_test
