// What a wait guards. A wait orders the producer's writes before the reads that follow it; the rewriter cannot see
// which memory the producer wrote, so it takes every read of the waiting statement after its wait that could see
// another kernel's writes as guarded, and keeps any statement that reads such memory below that wait, whether or
// not the statement waits itself (two loads of one produced tile, only the first with the wait: hoisting the second
// would race with the producer).
//
// Not guarded: what the waiting statement reads before its wait (the wait's own arguments, the statements before it)
// when that wait runs first and unconditionally: in a race-free program the producer's writes of memory a thread
// reads before a wait are ordered before that read by something else, so this wait is not what makes them visible.
#pragma once

#include <vector>

#include "access_analysis.h"

namespace cusync::tile_rewriter {

// Whether another kernel may have written the storage at `location`: anything reached through a pointer, a
// reference or a view, `this`, names the analysis cannot resolve, and global variables that are not const. Not:
// values a thread owns (parameters and locals held by value, temporaries) and __shared__ variables, which no other
// kernel can write.
bool mayHoldProducedData(const StorageLocation& location);

// The reads of a waiting statement that its wait may guard, in the order they were recorded.
std::vector<Access> guardedReads(const StatementEffects& waiting);

}  // namespace cusync::tile_rewriter
