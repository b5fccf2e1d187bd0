#include <cusync/codegen/producer_policy.h>

#include <algorithm>
#include <map>

namespace cusync::codegen {
namespace {

bool sameGroupings(const std::vector<DimensionGrouping>& a, const std::vector<DimensionGrouping>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t d = 0; d < a.size(); ++d)
    if (a[d].kind != b[d].kind || a[d].step != b[d].step) return false;
  return true;
}

// The proof of one reader, with isl's limits reported like the per-dependency proofs.
Proof proveFor(const ProofModels& models, const PolicyCandidate& candidate, const PolicyFunctions& functions) {
  try {
    return provePolicy(models, candidate, functions);
  } catch (const isl::exception& error) {
    Proof proof;
    proof.failure = std::string("isl could not decide the proof: ") + error.what();
    return proof;
  }
}

// All readers' proofs as one: proven iff each is; symbolic iff each is; the statement names every reader.
Proof combine(const std::string& producer, const std::vector<ProducerReader>& readers) {
  Proof proof;
  proof.proven = true;
  proof.scope = ProofScope::AllParameterValues;
  std::string readersText;
  for (const ProducerReader& reader : readers) {
    readersText += (readersText.empty() ? "" : ", ") + reader.dependency + " (read by " + reader.consumerGrid + ")";
    if (!reader.proof.proven && proof.proven) {
      proof.proven = false;
      proof.failure = "for dependency " + reader.dependency + ": " + reader.proof.failure;
      proof.counterexample = reader.proof.counterexample;
    }
    if (reader.proof.scope != ProofScope::AllParameterValues) proof.scope = ProofScope::GivenParameterValues;
    if (proof.scopeNote.empty() && !reader.proof.scopeNote.empty())
      proof.scopeNote = "for dependency " + reader.dependency + ": " + reader.proof.scopeNote;
    if (proof.exact && !reader.proof.exact) {
      proof.exact = false;
      proof.overApproximation = reader.proof.overApproximation + " (dependency " + reader.dependency + ")";
    }
  }
  proof.parameters = readers.front().proof.parameters;
  proof.statement = "for every dependency that reads " + producer + " (" + readersText + "), separately: " +
                    readers.front().proof.statement;
  const std::string& first = readers.front().consumerGrid;
  auto at = proof.statement.find("read by a " + first + " tile");
  if (at != std::string::npos) proof.statement.replace(at, 10 + first.size() + 5, "read by a consumer tile");
  return proof;
}

}  // namespace

std::string ProducerPolicyResult::dependencyList() const {
  std::string list;
  for (const ProducerReader& reader : readers) list += (list.empty() ? "" : " ") + reader.dependency;
  return list;
}

std::vector<ProducerPolicyResult> deriveProducerPolicies(const ProofModels& models,
                                                         const std::vector<PolicyCandidate>& candidates) {
  // Readers of each producer grid, in declaration order.
  std::map<std::string, std::vector<ProducerReader>> readersOf;
  std::vector<std::string> producers;
  for (const analysis::DependencyModel& dependency : models.symbolic.dependencies())
    for (std::size_t p = 0; p < dependency.producers.size(); ++p) {
      const std::string& grid = dependency.producers[p].producer.grid;
      if (readersOf[grid].empty()) producers.push_back(grid);
      readersOf[grid].push_back({dependency.dependency.name, p, dependency.dependency.consumerGrid, {}});
    }
  std::vector<ProducerPolicyResult> results;
  for (const std::string& producer : producers) {
    const std::vector<ProducerReader>& readers = readersOf[producer];
    if (readers.size() < 2) continue;
    for (const PolicyCandidate& candidate : candidates) {
      if (candidate.producerGrid != producer) continue;
      bool seen = std::any_of(results.begin(), results.end(), [&](const ProducerPolicyResult& r) {
        return r.producerGrid == producer && (sameGroupings(r.dimensions, candidate.dimensions) || r.policy == candidate.policy);
      });
      if (seen) continue;
      ProducerPolicyResult result;
      result.producerGrid = producer;
      result.policy = candidate.policy;
      result.dimensions = candidate.dimensions;
      for (const std::string& line : candidate.rationale)
        result.rationale.push_back("as derived for dependency " + candidate.dependency + ": " + line);
      result.functions = policyFunctions(candidate);
      result.readers = readers;
      for (ProducerReader& reader : result.readers) {
        PolicyCandidate forReader = candidate;
        forReader.dependency = reader.dependency;
        forReader.producerIndex = reader.producerIndex;
        forReader.consumerGrid = reader.consumerGrid;
        reader.proof = proveFor(models, forReader, result.functions);
      }
      result.proof = combine(producer, result.readers);
      results.push_back(std::move(result));
    }
  }
  return results;
}

}  // namespace cusync::codegen
