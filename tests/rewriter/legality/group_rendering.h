// Model groups as CUDA source for the rewriter, and the rewriter's output read back. Each group becomes one kernel
// `group<N>`; each of its statements carries a trailing comment `// group <N> statement <i>` on its last line, which
// moves with it (the rewriter moves whole lines with their trailing comment).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tile_load_group_model.h"

namespace cusync::rewriter_test {

// A self-contained translation unit (its own Stage and loadTile) with one kernel per group.
std::string renderKernels(const std::vector<ModelGroup>& groups);

// For each kernel `group<N>` in `source`: the statement indices in the order their markers appear.
std::map<size_t, std::vector<size_t>> statementOrderByGroup(const std::string& source);

// For each kernel `group<N>` in `source`: its lines, sorted (the text of a kernel whose statements were only
// reordered has the same sorted lines).
std::map<size_t, std::vector<std::string>> sortedLinesByGroup(const std::string& source);

}  // namespace cusync::rewriter_test
