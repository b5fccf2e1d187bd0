#include <cusync/codegen/summary.h>

#include <sstream>

namespace cusync::codegen {
namespace {

std::string scopeWord(const Proof& proof) {
  return proof.scope == ProofScope::AllParameterValues ? "symbolic" : "concrete";
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string jsonProof(const Proof& proof) {
  std::ostringstream out;
  out << "{\"proven\": " << (proof.proven ? "true" : "false") << ", \"scope\": " << quoted(scopeWord(proof))
      << ", \"parameters\": " << quoted(proof.parameters) << ", \"statement\": " << quoted(proof.statement);
  if (!proof.scopeNote.empty()) out << ", \"scopeNote\": " << quoted(proof.scopeNote);
  if (!proof.proven)
    out << ", \"failure\": " << quoted(proof.failure) << ", \"counterexample\": " << quoted(proof.counterexample);
  return out.str() + "}";
}

std::string groupingName(const DimensionGrouping& g) {
  switch (g.kind) {
    case Grouping::Separate: return "separate";
    case Grouping::Whole: return "whole";
    case Grouping::Strided: return "strided " + std::to_string(g.step);
    case Grouping::Block: return "block " + std::to_string(g.step);
  }
  return "?";
}

}  // namespace

std::string textSummary(const Generation& generation) {
  std::ostringstream out;
  out << "policies (" << generation.emittedPolicies().size() << " proven of " << generation.policies.size()
      << " candidates):\n";
  for (const PolicyResult& policy : generation.policies) {
    const PolicyCandidate& c = policy.candidate;
    if (policy.proof.proven) {
      out << "  " << c.structName() << ": proven (" << scopeWord(policy.proof) << ", " << policy.proof.parameters
          << ")" << (policy.proof.exact ? "" : "; over-approximates, e.g. " + policy.proof.overApproximation) << "\n";
      if (!policy.proof.scopeNote.empty()) out << "    note: " << policy.proof.scopeNote << "\n";
    } else {
      out << "  " << c.structName() << ": REJECTED: " << policy.proof.failure
          << (policy.proof.counterexample.empty() ? "" : "; counterexample " + policy.proof.counterexample) << "\n";
    }
  }
  for (const ProducerPolicyResult& policy : generation.producerPolicies) {
    out << "  " << policy.structName() << " (for " << policy.dependencyList() << "): ";
    if (policy.proof.proven)
      out << "proven (" << scopeWord(policy.proof) << ", " << policy.proof.parameters << ")"
          << (policy.proof.exact ? "" : "; over-approximates, e.g. " + policy.proof.overApproximation) << "\n";
    else
      out << "REJECTED: " << policy.proof.failure
          << (policy.proof.counterexample.empty() ? "" : "; counterexample " + policy.proof.counterexample) << "\n";
  }
  for (const DroppedCandidate& dropped : generation.dropped)
    out << "  dependency " << dropped.dependency << " <- " << dropped.producerGrid << ": " << dropped.description
        << " not offered: " << dropped.reason << "\n";
  out << "tile orders:\n";
  for (const TileOrderResult& order : generation.orders) {
    out << "  " << order.order.structName() << ": ";
    if (!order.proof.proven)
      out << "REJECTED: " << order.proof.failure << "; counterexample " << order.proof.counterexample << "\n";
    else if (!order.sameAs.empty())
      out << "bijection, equal to " << order.sameAs << " (not repeated)\n";
    else
      out << "bijection (" << scopeWord(order.proof) << ")\n";
  }
  out << "optimizations (" << generation.optimizationOptions.smCount << " SMs):\n";
  for (const StageOptimization& stage : generation.optimizations) {
    out << "  " << stage.dependency << " (" << stage.consumerGrid << "): " << stage.totalTiles << " tiles with "
        << "every stage it waits on (" << stage.directTiles << " with its direct producers), "
        << stage.slots << " slots: wait-kernel " << (stage.avoidWaitKernel ? "avoidable" : "needed")
        << ", custom tile order " << (stage.avoidCustomOrder ? "avoidable" : "needed");
    if (!stage.waitKernelAvoidableFor.empty())
      out << "; W holds for " << stage.waitKernelAvoidableFor << ", T for " << stage.customOrderAvoidableFor;
    out << "\n";
  }
  return out.str();
}

std::string jsonSummary(const Generation& generation, const std::string& checkText) {
  std::ostringstream out;
  out << "{\n  \"spec\": " << quoted(generation.specName) << ",\n";
  if (!checkText.empty()) out << "  \"check\": " << quoted(checkText) << ",\n";
  out << "  \"parameters\": {";
  bool first = true;
  for (const auto& [name, value] : generation.parameterValues) {
    out << (first ? "" : ", ") << quoted(name) << ": " << value;
    first = false;
  }
  out << "},\n  \"symbolicParameters\": [";
  first = true;
  for (const std::string& name : generation.symbolicParameters) {
    out << (first ? "" : ", ") << quoted(name);
    first = false;
  }
  out << "],\n  \"policies\": [";
  first = true;
  for (const PolicyResult& policy : generation.policies) {
    const PolicyCandidate& c = policy.candidate;
    out << (first ? "\n" : ",\n") << "    {\"struct\": " << quoted(c.structName()) << ", \"policy\": "
        << quoted(c.policy) << ", \"dependency\": " << quoted(c.dependency) << ", \"producer\": "
        << quoted(c.producerGrid) << ", \"consumer\": " << quoted(c.consumerGrid) << ", \"emitted\": "
        << (policy.proof.proven ? "true" : "false") << ", \"exact\": " << (policy.proof.exact ? "true" : "false")
        << ", \"derivedFromRelation\": " << (c.derivedFromRelation ? "true" : "false") << ", \"dimensions\": [";
    for (std::size_t d = 0; d < c.dimensions.size(); ++d)
      out << (d ? ", " : "") << quoted(groupingName(c.dimensions[d]));
    out << "], \"proof\": " << jsonProof(policy.proof) << "}";
    first = false;
  }
  out << "\n  ],\n  \"producerPolicies\": [";
  first = true;
  for (const ProducerPolicyResult& policy : generation.producerPolicies) {
    out << (first ? "\n" : ",\n") << "    {\"struct\": " << quoted(policy.structName()) << ", \"policy\": "
        << quoted(policy.policy) << ", \"producer\": " << quoted(policy.producerGrid) << ", \"dependencies\": [";
    for (std::size_t r = 0; r < policy.readers.size(); ++r)
      out << (r ? ", " : "") << "{\"dependency\": " << quoted(policy.readers[r].dependency) << ", \"consumer\": "
          << quoted(policy.readers[r].consumerGrid) << ", \"proof\": " << jsonProof(policy.readers[r].proof) << "}";
    out << "], \"emitted\": " << (policy.proof.proven ? "true" : "false") << ", \"exact\": "
        << (policy.proof.exact ? "true" : "false") << ", \"proof\": " << jsonProof(policy.proof) << "}";
    first = false;
  }
  out << "\n  ],\n  \"dropped\": [";
  first = true;
  for (const DroppedCandidate& dropped : generation.dropped) {
    out << (first ? "\n" : ",\n") << "    {\"dependency\": " << quoted(dropped.dependency) << ", \"producer\": "
        << quoted(dropped.producerGrid) << ", \"description\": " << quoted(dropped.description)
        << ", \"reason\": " << quoted(dropped.reason) << "}";
    first = false;
  }
  out << "\n  ],\n  \"tileOrders\": [";
  first = true;
  for (const TileOrderResult& order : generation.orders) {
    out << (first ? "\n" : ",\n") << "    {\"struct\": " << quoted(order.order.structName()) << ", \"grid\": "
        << quoted(order.order.grid) << ", \"emitted\": "
        << (order.proof.proven && order.sameAs.empty() ? "true" : "false");
    if (!order.sameAs.empty()) out << ", \"sameAs\": " << quoted(order.sameAs);
    if (!order.order.policyStruct.empty()) out << ", \"groups\": " << quoted(order.order.policyStruct);
    out << ", \"proof\": " << jsonProof(order.proof) << "}";
    first = false;
  }
  out << "\n  ],\n  \"optimizations\": [";
  first = true;
  for (const StageOptimization& stage : generation.optimizations) {
    out << (first ? "\n" : ",\n") << "    {\"dependency\": " << quoted(stage.dependency) << ", \"consumer\": "
        << quoted(stage.consumerGrid) << ", \"grids\": {";
    bool firstGrid = true;
    for (const std::string& grid : stage.grids) {
      out << (firstGrid ? "" : ", ") << quoted(grid) << ": " << stage.tileCounts.at(grid);
      firstGrid = false;
    }
    out << "}, \"directGrids\": [";
    for (std::size_t i = 0; i < stage.directGrids.size(); ++i) out << (i ? ", " : "") << quoted(stage.directGrids[i]);
    out << "], \"smCount\": " << generation.optimizationOptions.smCount << ", \"occupancy\": " << stage.occupancy
        << ", \"slots\": " << stage.slots << ", \"avoidWaitKernel\": " << (stage.avoidWaitKernel ? "true" : "false")
        << ", \"avoidCustomOrder\": " << (stage.avoidCustomOrder ? "true" : "false")
        << ", \"waitKernelAvoidableFor\": " << quoted(stage.waitKernelAvoidableFor)
        << ", \"customOrderAvoidableFor\": " << quoted(stage.customOrderAvoidableFor) << "}";
    first = false;
  }
  out << "\n  ]\n}\n";
  return out.str();
}

}  // namespace cusync::codegen
