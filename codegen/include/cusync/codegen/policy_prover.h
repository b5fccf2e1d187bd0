// The isl prover: a policy is emitted only if it is proven sound, an order only if it is proven a bijection.
//
// Policy soundness (docs/DESIGN.md "What must hold", 2), for producer grid P, its domain Dom(P) and the producer tiles
// W = R(Dom(C)) some consumer reads:
//   (range)  for all p in Dom(P): 0 <= sem(p) < semaphoreCount
//   (value)  for all p in W: value(p) == |{p' in Dom(P) : sem(p') == sem(p)}|
// Presburger arithmetic cannot count, so (value) is proven through the policy's rank function as a witness:
//   - value is the same for all tiles of one semaphore,
//   - rank is injective on the tiles of one semaphore,
//   - rank maps the tiles of every waited semaphore into [0, value), and onto it.
// An injection into [0, v) that is also onto has exactly v elements. Each check is an emptiness or inclusion
// question isl decides for all values of the symbolic parameters under the spec's constraints. When a function is
// not quasi-affine in them (a product of two symbolic extents), the proof is redone with the symbolic parameters
// bound to the values given (defaults or -D), and the result says so.
// Host-only header.
#pragma once

#include <cusync/analysis/isl_model.h>
#include <cusync/codegen/index_expression.h>
#include <cusync/codegen/policy_candidate.h>
#include <cusync/codegen/policy_functions.h>

#include <string>

namespace cusync::codegen {

// The model twice: with symbolic parameters as isl parameters, and with them bound to their given values.
struct ProofModels {
  const analysis::IslModel& symbolic;
  const analysis::IslModel& concrete;
};

enum class ProofScope {
  AllParameterValues,    // for every value of the symbolic parameters satisfying the spec's constraints
  GivenParameterValues,  // for the parameter values given (the spec has no symbolic parameter, or see scopeNote)
};

struct Proof {
  bool proven = false;
  ProofScope scope = ProofScope::GivenParameterValues;
  std::string parameters;      // "for all [B] -> { : B >= 1 }" or "for B = 4"
  std::string scopeNote;       // why a symbolic proof fell back to the given values, if it did
  std::string statement;       // what was checked, for the header comment and --check
  std::string failure;         // which check failed (empty if proven)
  std::string counterexample;  // an isl point showing the failure
  // Policies only: whether consumers wait only for producer tiles they read. An over-approximating policy is
  // still sound; it just makes consumers wait longer.
  bool exact = true;
  std::string overApproximation;  // a consumer tile and a producer tile it waits for without reading it
};

// Proves a policy's soundness for its dependency and producer.
Proof provePolicy(const ProofModels& models, const PolicyCandidate& candidate, const PolicyFunctions& functions);

// Proves that a consumer waiting under the policy has waited for every producer tile in `reads`, a relation
// { C[c] -> P[p] } in `model`'s context with the dependency's consumer and producer grids as tuples: a consumer
// tile c waits on sem(p) for every p its dependency lists, R(c), which covers every tile sharing one of those
// semaphores, so the claim is reads(c) ⊆ sem⁻¹(sem(R(c))) for every consumer tile and admissible parameter value.
// `reads` is what the consumer really reads, derived independently of the spec (e.g. a convolution's stencil,
// pixel by pixel): the check that the spec's Ranges are not too small. Together with provePolicy (value(s) ==
// |sem⁻¹(s)|) it says a consumer passes its waits only after every tile in reads(c) has posted. A failure names a
// consumer tile, a tile it reads but does not wait for, and the parameter values. Throws NotAffine.
Proof proveCovers(const analysis::IslModel& model, const PolicyCandidate& candidate, const PolicyFunctions& functions,
                  const isl::map& reads);

// Proves that `index` is a bijection from the grid's tiles onto [0, tileCount).
Proof proveTileOrder(const ProofModels& models, const std::string& grid, const IndexExpression& index);

// Whether `e` has the same value on every tile of the grid (for all admissible parameters). Throws NotAffine.
bool isUniform(const analysis::IslModel& model, const std::string& grid, const IndexExpression& e);

// Whether two index expressions agree on every tile of the grid (for all admissible parameters).
bool agreeOnGrid(const ProofModels& models, const std::string& grid, const IndexExpression& a,
                 const IndexExpression& b);

// What isl needs to lower index expressions on one grid of a model.
IslGridContext gridContext(const analysis::IslModel& model, const std::string& grid);

// A function of the symbolic parameters only (a grid extent of the model) as a function on a grid's tiles.
isl::pw_aff onGridDomain(const isl::pw_aff& parameterFunction, const isl::space& gridSpace);

}  // namespace cusync::codegen
