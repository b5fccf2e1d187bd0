// The legality rule of `#pragma tile` reordering, checked directly on a model group and the order the rewriter
// produced, independently of the rewriter's own reordering code:
//   1. the output is a permutation of the input statements;
//   2. a statement that reads memory a wait before it may guard (ModelStatement::guarded) stays after that wait;
//   3. two statements with a data dependence (one writes what the other reads or writes: RAW, WAR, WAW) keep their
//      relative order.
#pragma once

#include <string>
#include <vector>

#include "tile_load_group_model.h"

namespace cusync::rewriter_test {

// `outputOrder[p]` is the input index of the statement at output position p. Returns one line per violation; empty
// when the order is legal.
std::vector<std::string> legalityViolations(const ModelGroup& group, const std::vector<size_t>& outputOrder);

// Statements the rewriter has every reason to hoist: they do not wait, follow a waiting statement, and depend on no
// statement before them (rules 2 and 3). A rewriter that leaves one below a wait is legal but does not do its job;
// the property test checks it does, so that an inert rewriter cannot pass.
std::vector<size_t> freelyHoistableStatements(const ModelGroup& group);

}  // namespace cusync::rewriter_test
