// Policy candidates: the synchronization policies a dependency admits, derived from its relation.
//
// cuSyncGen (paper section IV-A, "Generating Policies"): for a consumer tile that reads N > 1 producer tiles along
// a dimension, there are two extremes per dimension — one semaphore per producer tile (value 1) or one semaphore
// for all N (value N) — and their combinations across dimensions. How the N tiles sit along the dimension decides
// which tiles share a semaphore:
//   - Whole:   the consumer reads every tile along the dimension (ForAll over the full range) — RowSync on x.
//   - Strided: the consumer reads tiles d, d+S, d+2S, ... (the attention QKV split) — StridedSync.
//   - Block:   the consumer reads N consecutive tiles (a ForAll over a range of constant length N, or x*N+i).
// TileSync (every dimension Separate) is always a candidate; so is RowSync, the paper's default coarsening, even
// where a consumer reads one tile per row (it then waits for tiles it does not read; the prover reports that).
// Candidates are only candidates: the prover decides which are emitted. Host-only header.
#pragma once

#include <cusync/analysis/isl_model.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cusync::codegen {

enum class Grouping { Separate, Whole, Strided, Block };

// Which producer tiles along one dimension share a semaphore.
struct DimensionGrouping {
  Grouping kind = Grouping::Separate;
  std::int64_t step = 1;   // Strided: stride S; Block: block length N; otherwise 1
  std::string stepSource;  // the step as the spec wrote it (e.g. "H/(8*TileN)"), for comments
  friend bool operator==(const DimensionGrouping&, const DimensionGrouping&) = default;
};

struct PolicyCandidate {
  std::string dependency;
  std::string consumerGrid;
  std::string producerGrid;
  std::size_t producerIndex = 0;              // position in the dependency's producer list
  std::string policy;                         // "TileSync", "RowSync", "StridedSync", "Conv2DTileSync", ...
  std::vector<DimensionGrouping> dimensions;  // one per producer grid dimension (x, y, z order)
  std::vector<std::string> rationale;         // why: what the relation says along each grouped dimension
  bool derivedFromRelation = true;            // false for RowSync offered as a coarsening
  std::string structName() const;             // "Dep_<dependency>_<producer>_<policy>"
};

// A candidate the derivation could not offer, with the reason (listed by --check).
struct DroppedCandidate {
  std::string dependency;
  std::string producerGrid;
  std::string description;
  std::string reason;
};

struct CandidateDerivation {
  std::vector<PolicyCandidate> candidates;  // deterministic order: dependency, producer, then TileSync first
  std::vector<DroppedCandidate> dropped;
};

// Derives the candidates of every (dependency, producer) of a bounds-checked model.
CandidateDerivation derivePolicyCandidates(const analysis::IslModel& model);

// The policy name for a combination of groupings ("TileSync", "RowSync", "StridedSync", "RowColumnSync", ...).
// `scaledRelation`: the relation multiplies a consumer coordinate by a constant (`x*s`), the paper's Conv2D case,
// whose all-Separate policy the paper calls Conv2DTileSync.
std::string policyName(const std::vector<DimensionGrouping>& dimensions, bool scaledRelation);

}  // namespace cusync::codegen
