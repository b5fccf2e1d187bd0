// The host-side pairing of policies (runtime/include/cusync/output_policy.h), without a GPU: a stage's typed view
// and a consumer's input view must name the policy the stage posts under, and the refusal names both policies.
#include <catch2/catch.hpp>

#include "cusync/output_policy.h"
#include "cusync/tile.h"

using namespace cusync;
using Catch::Matchers::Contains;

TEST_CASE("a typed view naming the stage's output policy is accepted", "[output_policy]") {
  const OutputPolicyTag posted = OutputPolicyTag::of<RowSync>();
  CHECK(posted.is<RowSync>());
  CHECK_FALSE(whyViewPolicyDiffers<RowSync>("gemm1", posted).has_value());
}

TEST_CASE("a typed view naming another policy than the stage posts under is refused, naming both",
          "[output_policy]") {
  const auto why = whyViewPolicyDiffers<TileSync>("gemm1", OutputPolicyTag::of<RowSync>());
  REQUIRE(why.has_value());
  CHECK_THAT(*why, Contains("'gemm1'") && Contains("posts under cusync::RowSync") &&
                       Contains("view posting under cusync::TileSync"));
}

TEST_CASE("a typed view of a stage without output policy is refused", "[output_policy]") {
  const auto why = whyViewPolicyDiffers<TileSync>("last", OutputPolicyTag{});
  REQUIRE(why.has_value());
  CHECK_THAT(*why, Contains("'last' has no output policy") && Contains("setOutputPolicy<cusync::TileSync>"));
}

TEST_CASE("an input view naming the producer's output policy is accepted", "[output_policy]") {
  CHECK_FALSE(whyInputPolicyDiffers<TileSync>("gemm2", "gemm1", OutputPolicyTag::of<TileSync>()).has_value());
}

TEST_CASE("an input view naming another policy than the producer posts under is refused, naming both",
          "[output_policy]") {
  const auto why = whyInputPolicyDiffers<RowSync>("gemm2", "gemm1", OutputPolicyTag::of<TileSync>());
  REQUIRE(why.has_value());
  CHECK_THAT(*why, Contains("'gemm2' waits on stage 'gemm1' under policy cusync::RowSync") &&
                       Contains("'gemm1' posts under cusync::TileSync"));
}

TEST_CASE("an input view on a producer without output policy is refused", "[output_policy]") {
  const auto why = whyInputPolicyDiffers<RowSync>("gemm2", "gemm1", OutputPolicyTag{});
  REQUIRE(why.has_value());
  CHECK_THAT(*why, Contains("'gemm1', which has no output policy"));
}
