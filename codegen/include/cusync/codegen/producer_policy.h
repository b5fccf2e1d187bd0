// Producer policies: one policy for a producer grid read by several dependencies.
//
// A runtime Stage posts its tiles under one output policy (Stage::setOutputPolicy), and a consumer waits through
// InputView<Policy> only if Policy is that policy (Stage::inputFor checks the pairing). A per-dependency policy
// `Dep_<dependency>_<producer>_<policy>` is proven for its one dependency; when two dependencies read the same
// producer (attention's QKV grid feeds the dot product and the softmax-V product; any diamond), the stage can post
// under only one of them, and the other consumer cannot use its own. So for every producer read by more than one
// (dependency, producer) pair, each grouping derived for any of them is offered once more as
// `Producer_<producer>_<policy>` and proven separately for every dependency that reads the producer (the
// soundness statement of policy_prover.h for each reader's relation). It is emitted only if every proof holds: one
// output policy, valid for every consumer. Grouped tile orders need no copy: they depend only on the functions,
// and the per-dependency grouped order with the same grouping is the same order. Host-only header.
#pragma once

#include <cusync/codegen/policy_candidate.h>
#include <cusync/codegen/policy_functions.h>
#include <cusync/codegen/policy_prover.h>

#include <string>
#include <vector>

namespace cusync::codegen {

// One dependency that reads the producer, with the proof for its relation.
struct ProducerReader {
  std::string dependency;
  std::size_t producerIndex = 0;
  std::string consumerGrid;
  Proof proof;
};

struct ProducerPolicyResult {
  std::string producerGrid;
  std::string policy;                         // "StridedSync", "RowSync", ...
  std::vector<DimensionGrouping> dimensions;  // as in PolicyCandidate
  std::vector<std::string> rationale;
  PolicyFunctions functions;
  std::vector<ProducerReader> readers;        // every (dependency, producer) pair that reads producerGrid
  Proof proof;  // proven iff every reader's proof is; statement, scope and precision over all of them
  std::string structName() const { return "Producer_" + producerGrid + "_" + policy; }
  std::string dependencyList() const;  // "dep1P depTR1"
};

// Producer policies of every producer read by more than one (dependency, producer) pair. `candidates`: the
// per-dependency candidates (their groupings are the ones offered).
std::vector<ProducerPolicyResult> deriveProducerPolicies(const ProofModels& models,
                                                         const std::vector<PolicyCandidate>& candidates);

}  // namespace cusync::codegen
