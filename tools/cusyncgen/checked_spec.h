// A spec that passed every front-end check, with everything later stages need: the IR, the isl model with symbolic
// parameters kept (for proofs over all values) and with them bound (for enumeration), and the dependency facts.
#pragma once

#include <cusync/analysis/dependency_facts.h>
#include <cusync/analysis/isl_model.h>
#include <cusync/dsl/diagnostic.h>
#include <cusync/dsl/spec.h>

#include <string>
#include <vector>

namespace cusync::cusyncgen {

struct CheckedSpec {
  std::string specPath;
  spec::Spec spec;
  analysis::IslModel symbolicModel;  // symbolic parameters are isl parameters, constrained by context()
  analysis::IslModel boundModel;     // symbolic parameters bound to their (overridden) values
  std::vector<analysis::DependencyFacts> facts;  // computed on boundModel
  dsl::SourceTexts sources;          // for rendering further diagnostics with caret lines
};

}  // namespace cusync::cusyncgen
