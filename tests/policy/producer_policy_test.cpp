// Producer policies (producer_policy.h): a stage posts under one policy, so a producer read by two dependencies
// (a diamond; attention's QKV grid) needs one policy proven for both. The generator offers each grouping of any
// reader once more as Producer_<grid>_<policy>, proven for every reader, and the header lists them.
#include "model_fixture.h"
#include "spec_builder.h"

#include <cusync/codegen/header_emitter.h>

using namespace cusync;
using namespace cusync::policytest;

namespace {

// g0 feeds g1 (tile for tile) and g2 (whole rows); g3 reads g1 and g2.
spec::Spec diamondSpec() {
  SpecBuilder b("diamond");
  b.parameter("B", 3, true);
  spec::Tile xy = tile({dim("x"), dim("y")});
  b.grid("g0", {num(6), param("B")}).grid("g1", {num(6), param("B")}).grid("g2", {num(2), param("B")});
  b.grid("g3", {num(6), param("B")});
  b.dependency("d1", "g1", xy, {{"g0", {tiles(xy)}}});
  b.dependency("d2", "g2", xy, {{"g0", {forAll(xy, "x", num(0), extentOf("g0", 0))}}});
  b.dependency("d3", "g3", xy, {{"g1", {tiles(xy)}}, {"g2", {tiles(tile({num(0), dim("y")}))}}});
  return b.spec;
}

const codegen::ProducerPolicyResult* producerPolicy(const codegen::Generation& generation, const std::string& name) {
  for (const codegen::ProducerPolicyResult& policy : generation.producerPolicies)
    if (policy.structName() == name) return &policy;
  return nullptr;
}

}  // namespace

TEST_CASE("Producer policies: a diamond's shared producer gets policies proven for both of its consumers",
          "[producer-policy]") {
  Models models = buildModels(diamondSpec());
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  // Only g0 is read by more than one dependency.
  for (const codegen::ProducerPolicyResult& policy : generation.producerPolicies) CHECK(policy.producerGrid == "g0");
  for (const char* name : {"Producer_g0_TileSync", "Producer_g0_RowSync"}) {
    const codegen::ProducerPolicyResult* policy = producerPolicy(generation, name);
    INFO(name);
    REQUIRE(policy != nullptr);
    CHECK(policy->proof.proven);
    CHECK(policy->proof.scope == codegen::ProofScope::AllParameterValues);
    REQUIRE(policy->readers.size() == 2);
    CHECK(policy->readers[0].dependency == "d1");
    CHECK(policy->readers[0].consumerGrid == "g1");
    CHECK(policy->readers[1].dependency == "d2");
    CHECK(policy->readers[1].consumerGrid == "g2");
    for (const codegen::ProducerReader& reader : policy->readers) CHECK(reader.proof.proven);
  }
  // TileSync waits only for tiles read, for both; RowSync makes d1's consumers wait for whole rows.
  CHECK(producerPolicy(generation, "Producer_g0_TileSync")->proof.exact);
  CHECK_FALSE(producerPolicy(generation, "Producer_g0_RowSync")->proof.exact);
  CHECK_THAT(producerPolicy(generation, "Producer_g0_RowSync")->proof.overApproximation, Catch::Contains("(dependency d1)"));
  std::string header = codegen::emitHeader(generation, "");
  CHECK_THAT(header, Catch::Contains("struct Producer_g0_RowSync {"));
  CHECK_THAT(header, Catch::Contains("#define CUSYNC_DIAMOND_PRODUCER_POLICIES(X) \\\n"
                                     "  X(cusync::generated::diamond::Producer_g0_TileSync, \"g0\", \"d1 d2\")"));
  CHECK_THAT(header, Catch::Contains("g0 is read by 2 dependencies"));
}

TEST_CASE("Producer policies: attention's QKV grid gets StridedSync for the dot product and the softmax-V stage",
          "[producer-policy]") {
  Models models = buildModels(attentionSpec());
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  const codegen::ProducerPolicyResult* strided = producerPolicy(generation, "Producer_g1_StridedSync");
  REQUIRE(strided != nullptr);
  CHECK(strided->proof.proven);
  REQUIRE(strided->readers.size() == 2);
  CHECK(strided->readers[0].dependency == "dep1P");
  CHECK(strided->readers[1].dependency == "depTR1");
  CHECK_THAT(strided->proof.statement, Catch::Contains("for every dependency that reads g1 (dep1P (read by gP), "
                                                       "depTR1 (read by gT)), separately"));
  // Producers with one reader get none.
  for (const codegen::ProducerPolicyResult& policy : generation.producerPolicies) CHECK(policy.producerGrid == "g1");
}

TEST_CASE("Producer policies: a producer read by one dependency gets none, and the list macro is still defined",
          "[producer-policy]") {
  Models models = buildModels(mlpSpec());
  codegen::Generation generation = codegen::generate(models.proofModels(), {});
  CHECK(generation.producerPolicies.empty());
  CHECK_THAT(codegen::emitHeader(generation, ""), Catch::Contains("#define CUSYNC_MLP_PRODUCER_POLICIES(X)\n"));
}
