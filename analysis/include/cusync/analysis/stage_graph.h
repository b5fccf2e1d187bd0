// The stage graph: one edge from a consumer grid to each producer grid it waits on, one per producer of every
// dependency. Accepted specs have an acyclic stage graph without self-edges.
//
// Why (docs/DESIGN.md, Progress): a consumer block that spins must be waiting for producer tiles whose blocks are
// resident or finished. cusync gets this by launching stages in an order where every stage waits only on stages
// launched before it (wait-kernel or programmatic dependent launch). A cycle g1 -> g2 -> g1 has no such order: the
// first tiles of each wait for tiles the other produces only after its own waits pass, so both deadlock. A
// self-edge (the tiles of a grid waiting on tiles of the same grid, a wavefront) is refused too: it needs its own
// argument that the tiles of one grid are started in an order where every wait is on an earlier tile, and the
// compiler does not make that argument yet.
// Host-only header.
#pragma once

#include <cusync/dsl/diagnostic.h>
#include <cusync/dsl/spec.h>

namespace cusync::analysis {

// Reports every self-dependency and one cycle per strongly connected set of grids, each as an error at the
// location of a dependency on it, naming the cycle; notes locate the other dependencies of the cycle. Returns
// whether the graph is acyclic. Dependencies naming undeclared grids are ignored (reported elsewhere).
bool checkStageGraph(const spec::Spec& spec, dsl::Diagnostics& diagnostics);

}  // namespace cusync::analysis
