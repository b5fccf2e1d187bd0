// The GELU reference (cusync/gelu.cuh) computes the form the build names: GPT-3's tanh approximation by default, the
// exact (erf) form with CUSYNC_GELU_ERF, and says which by torch's name.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "cusync/gelu.cuh"

namespace {
double tanhForm(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }
double erfForm(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
}  // namespace

TEST_CASE("the GELU reference computes the form the build names, and the two forms differ measurably") {
  const bool tanhBuild = cusync::kGeluTanh;
  CHECK(std::string(cusync::kGeluApproximation) == (tanhBuild ? "tanh" : "none"));
  for (double x : {-6.0, -3.0, -1.0, -0.25, 0.0, 0.5, 1.0, 2.0, 3.0, 8.0}) {
    const double expected = tanhBuild ? tanhForm(x) : erfForm(x);
    INFO("x = " << x);
    CHECK(std::fabs(double(cusync::geluReference(float(x))) - expected) <= 1e-6 * (1.0 + std::fabs(expected)));
  }
  // Near x = 1 the forms differ by 1.5e-4, 150 times the tolerance above: the check tells them apart.
  CHECK(std::fabs(tanhForm(1.0) - erfForm(1.0)) > 1e-4);
}
