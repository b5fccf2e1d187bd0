// cuSyncGen's pipeline after the front end: derive policy candidates, prove them, derive and prove tile orders,
// decide the W/T optimizations. The emitter and the summaries print the result; nothing here prints.
// Host-only header.
#pragma once

#include <cusync/codegen/optimization_analysis.h>
#include <cusync/codegen/policy_candidate.h>
#include <cusync/codegen/policy_functions.h>
#include <cusync/codegen/policy_prover.h>
#include <cusync/codegen/producer_policy.h>
#include <cusync/codegen/tile_order.h>

#include <string>
#include <vector>

namespace cusync::codegen {

struct PolicyResult {
  PolicyCandidate candidate;
  PolicyFunctions functions;
  Proof proof;  // emitted iff proof.proven
};

struct TileOrderResult {
  TileOrderCandidate order;
  Proof proof;         // emitted iff proof.proven and sameAs is empty
  std::string sameAs;  // the struct of an earlier order that is equal on every tile
};

struct Generation {
  spec::Spec spec;
  std::string specName;
  std::vector<std::string> symbolicParameters;
  analysis::ParameterValues parameterValues;  // as given (defaults or -D); symbolic ones are example values
  std::vector<PolicyResult> policies;
  std::vector<ProducerPolicyResult> producerPolicies;  // producers read by several dependencies (producer_policy.h)
  std::vector<DroppedCandidate> dropped;
  std::vector<TileOrderResult> orders;
  std::vector<StageOptimization> optimizations;
  OptimizationOptions optimizationOptions;

  // every candidate, producer policy and order proven (dropped candidates are not failures)
  bool allProven() const;
  std::vector<const PolicyResult*> emittedPolicies() const;
  std::vector<const ProducerPolicyResult*> emittedProducerPolicies() const;
  std::vector<const TileOrderResult*> emittedOrders() const;
};

// `models.symbolic` and `models.concrete` must come from the same spec and -D values, bounds-checked.
Generation generate(const ProofModels& models, const OptimizationOptions& options);

}  // namespace cusync::codegen
