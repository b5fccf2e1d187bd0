// Which policies the derivation offers for the paper's dependency shapes.
#include "model_fixture.h"
#include "spec_builder.h"

#include <cusync/codegen/policy_candidate.h>

#include <algorithm>
#include <set>

using namespace cusync;
using namespace cusync::policytest;

namespace {

std::set<std::string> policiesOf(const codegen::CandidateDerivation& derivation, const std::string& dependency,
                                 const std::string& producer) {
  std::set<std::string> names;
  for (const auto& candidate : derivation.candidates)
    if (candidate.dependency == dependency && candidate.producerGrid == producer) names.insert(candidate.policy);
  return names;
}

}  // namespace

TEST_CASE("MLP: a consumer reading a whole producer row gets TileSync and RowSync", "[candidates]") {
  Models models = buildModels(mlpSpec());
  auto derivation = codegen::derivePolicyCandidates(*models.symbolic);
  CHECK(policiesOf(derivation, "dep", "g1") == std::set<std::string>{"TileSync", "RowSync"});
  auto row = std::find_if(derivation.candidates.begin(), derivation.candidates.end(),
                          [](const auto& c) { return c.policy == "RowSync"; });
  REQUIRE(row != derivation.candidates.end());
  CHECK(row->derivedFromRelation);
  CHECK(row->dimensions[0].kind == codegen::Grouping::Whole);
  CHECK(row->dimensions[1].kind == codegen::Grouping::Separate);
  CHECK(row->structName() == "Dep_dep_g1_RowSync");
}

TEST_CASE("Attention QKV split: strided tiles give StridedSync with the stride H/(8*TileN)", "[candidates]") {
  Models models = buildModels(stridedSpec());
  auto derivation = codegen::derivePolicyCandidates(*models.symbolic);
  CHECK(policiesOf(derivation, "dep1P", "g1") == std::set<std::string>{"TileSync", "StridedSync", "RowSync"});
  for (const auto& c : derivation.candidates) {
    if (c.policy == "StridedSync") {
      CHECK(c.dimensions[0].kind == codegen::Grouping::Strided);
      CHECK(c.dimensions[0].step == 6144 / (8 * 256));
    }
    if (c.policy == "RowSync") CHECK_FALSE(c.derivedFromRelation);  // a coarsening here, not derived
  }
}

TEST_CASE("Conv2D x*s relation: Conv2DTileSync and RowSync", "[candidates]") {
  Models models = buildModels(convSpec());
  auto derivation = codegen::derivePolicyCandidates(*models.symbolic);
  CHECK(policiesOf(derivation, "dep", "g1") == std::set<std::string>{"Conv2DTileSync", "RowSync"});
}

TEST_CASE("Attention chain: column reads give ColumnSync, two producers each get candidates", "[candidates]") {
  Models models = buildModels(attentionSpec());
  auto derivation = codegen::derivePolicyCandidates(*models.symbolic);
  CHECK(policiesOf(derivation, "depPR", "gP") == std::set<std::string>{"TileSync", "ColumnSync", "RowSync"});
  CHECK(policiesOf(derivation, "depTR1", "gR") == std::set<std::string>{"TileSync", "RowSync"});
  CHECK(policiesOf(derivation, "depTR1", "g1") == std::set<std::string>{"TileSync", "RowSync"});
  CHECK(policiesOf(derivation, "depT2", "gT") == std::set<std::string>{"TileSync", "RowSync"});
}

TEST_CASE("Consecutive offsets give a Block grouping", "[candidates]") {
  Models models = buildModels(blockSpec());
  auto derivation = codegen::derivePolicyCandidates(*models.symbolic);
  // 4x, 4x+1, ...: the coefficient 4 marks the relation as scaled, so the all-Separate policy is Conv2DTileSync.
  CHECK(policiesOf(derivation, "dep", "g1") == std::set<std::string>{"Conv2DTileSync", "Block4Sync", "RowSync"});
}

TEST_CASE("Policy names compose per dimension", "[candidates]") {
  using codegen::DimensionGrouping;
  using codegen::Grouping;
  CHECK(codegen::policyName({{}, {}}, false) == "TileSync");
  CHECK(codegen::policyName({{}, {}}, true) == "Conv2DTileSync");
  CHECK(codegen::policyName({{Grouping::Whole, 1, ""}, {}}, false) == "RowSync");
  CHECK(codegen::policyName({{}, {Grouping::Whole, 1, ""}}, false) == "ColumnSync");
  CHECK(codegen::policyName({{Grouping::Strided, 4, ""}, {}}, false) == "StridedSync");
  CHECK(codegen::policyName({{Grouping::Whole, 1, ""}, {Grouping::Whole, 1, ""}}, false) == "RowColumnSync");
  CHECK(codegen::policyName({{Grouping::Block, 2, ""}, {}, {Grouping::Whole, 1, ""}}, false) == "Block2BatchSync");
}
