// Builds the two isl models of a spec (symbolic parameters free, and bound) and runs the generator on them.
#pragma once

#include <cusync/analysis/isl_model.h>
#include <cusync/codegen/generation.h>

#include <catch2/catch.hpp>

#include <optional>
#include <string>

namespace cusync::policytest {

struct Models {
  std::optional<analysis::IslModel> symbolic;
  std::optional<analysis::IslModel> concrete;
  codegen::ProofModels proofModels() const { return {*symbolic, *concrete}; }
};

inline std::string diagnosticsText(const dsl::Diagnostics& diagnostics) {
  std::string text;
  for (const dsl::Diagnostic& d : diagnostics.all()) text += d.message + "\n";
  return text;
}

inline Models buildModels(const spec::Spec& spec, const analysis::ParameterValues& overrides = {}) {
  Models models;
  dsl::Diagnostics diagnostics;
  analysis::ModelOptions symbolic;
  symbolic.overrides = overrides;
  analysis::ModelOptions concrete = symbolic;
  concrete.bindSymbolicParameters = true;
  models.symbolic = analysis::IslModel::build(spec, symbolic, diagnostics);
  models.concrete = analysis::IslModel::build(spec, concrete, diagnostics);
  INFO(diagnosticsText(diagnostics));
  REQUIRE(models.symbolic.has_value());
  REQUIRE(models.concrete.has_value());
  return models;
}

inline const codegen::PolicyResult* findPolicy(const codegen::Generation& generation, const std::string& structName) {
  for (const codegen::PolicyResult& policy : generation.policies)
    if (policy.candidate.structName() == structName) return &policy;
  return nullptr;
}

}  // namespace cusync::policytest
