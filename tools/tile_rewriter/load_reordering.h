// The "R" optimization of the cuSync paper: within a group of annotated tile loads, issue the loads that need no
// wait before the loads that wait on a producer, so the waits overlap useful memory traffic. Each waiting load keeps
// its wait (they are one annotated statement), waiting loads keep their order, non-waiting loads keep theirs.
//
// Legality: a load moves above the statements it crosses only if it does not read or write what they write, they
// do not read what it writes, it reads nothing a wait it crosses may guard (guarded_memory.h), none of them has
// effects the analysis cannot see (a barrier), and a declaration it makes would not hide a name they use. A load that may not move stays where it is, with a warning that says why;
// the others still move.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "clang/Basic/SourceManager.h"

#include "access_analysis.h"
#include "annotated_statements.h"

namespace cusync::tile_rewriter {

// A run of annotated statements whose chunks change places: [begin, end) of the main file becomes the chunks in
// `chunks` order.
struct Reordering {
  unsigned begin = 0;
  unsigned end = 0;
  std::vector<std::pair<unsigned, unsigned>> chunks;
};

// A load left in place (or a statement that cannot move at all), with the reason and where the reason lies.
struct ReorderFinding {
  clang::SourceLocation where;
  std::string message;
  clang::SourceLocation noteWhere;  // invalid when there is no note
  std::string note;
};

struct ReorderPlan {
  std::vector<Reordering> reorderings;
  std::vector<ReorderFinding> findings;
};

ReorderPlan planReordering(const std::vector<TileLoadGroup>& groups, AccessAnalyzer& analyzer,
                           const clang::SourceManager& sources);

}  // namespace cusync::tile_rewriter
