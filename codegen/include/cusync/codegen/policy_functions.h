// The functions a policy candidate stands for, as index expressions over the producer tile and grid.
//
// Per grouped dimension d with extent E (the producer grid's, read at run time) and tile coordinate t:
//   grouping   semaphore coordinate   semaphores along d   tiles per semaphore (count)        rank in semaphore
//   Separate   t                      E                    1                                  0
//   Whole      0                      1                    E                                  t
//   Strided S  t % S                  S                    (E - 1 - t % S) / S + 1            t / S
//   Block N    t / N                  (E + N - 1) / N      min(N, E - N * (t / N))            t % N
// The policy's semaphore is the mixed-radix number of the per-dimension coordinates (x fastest), its value the
// product of the counts, and the rank (a tile's position among the tiles sharing its semaphore) the mixed-radix
// number of the per-dimension ranks. The rank is the prover's witness: it is a bijection from the tiles sharing
// a semaphore onto [0, value), which is how `value == |sem^-1(s)|` is proven without counting. Host-only header.
#pragma once

#include <cusync/codegen/index_expression.h>
#include <cusync/codegen/policy_candidate.h>

namespace cusync::codegen {

struct PolicyFunctions {
  IndexExpression semaphore;        // sem(tile, grid)
  IndexExpression semaphoreCount;   // semaphoreCount(grid): constant in the tile
  IndexExpression value;            // value(tile, grid)
  IndexExpression rankInSemaphore;  // position of the tile among the tiles of its semaphore
  // The semaphore as a tuple, one coordinate per dimension (x, y, z; 0 / 1 beyond the grid's rank), before the
  // mixed-radix linearization: chain orders map a semaphore to the consumer tile that waits on it.
  IndexExpression semaphoreCoordinates[3];
  IndexExpression semaphoreExtents[3];
};

PolicyFunctions policyFunctions(const PolicyCandidate& candidate);

}  // namespace cusync::codegen
