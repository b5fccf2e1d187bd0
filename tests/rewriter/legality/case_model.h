// A golden case's access model, written by hand next to it (cases/<name>.model), and the order in which the case's
// expected output has the modelled statements. With it the legality oracle judges the golden files themselves,
// which are otherwise regenerated from the tool's own output and only detect change.
//
// Model file, one directive a line (`#` starts a comment):
//   group <names...>                 a new group; the names are its global memory (may hold a producer's data)
//   <first>-<last> [wait [before <names...>]] [reads <names...>] [writes <names...>]
//                                    one annotated statement: its input lines, from its `#pragma tile` to its end;
//                                    whether it waits, what the wait's arguments read, what it reads (after the
//                                    wait) and writes. Names are the case's: `*A` for what pointer A points to.
#pragma once

#include <string>
#include <vector>

#include "tile_load_group_model.h"

namespace cusync::rewriter_test {

struct LineRange {
  size_t first = 0;  // 1-based, inclusive
  size_t last = 0;
};

struct CaseGroup {
  ModelGroup model;
  std::vector<LineRange> lines;  // per statement, in the input
};

struct CaseModel {
  std::vector<CaseGroup> groups;
  std::string error;  // empty when the file parsed
};

CaseModel parseCaseModel(const std::string& text);

std::vector<std::string> splitLines(const std::string& text);

// The statements of `group` in the order `output` has them: each statement's input lines are looked for as a block
// within the lines the group spans (reordering whole lines keeps that span). A statement not found is left out, so
// that the oracle reports a lost statement.
std::vector<size_t> outputOrder(const CaseGroup& group, const std::vector<std::string>& input,
                                const std::vector<std::string>& output);

}  // namespace cusync::rewriter_test
