// Grids must fit the runtime's 32-bit tile counts for every admissible parameter value (the emitted functions and
// GridShape compute in std::uint32_t, the proofs in unbounded integers): the issue-16 examples that were accepted
// and then wrapped at run time are spec errors at the grid, with the first parameter value that overflows.
#include "spec_test_support.h"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace cusync;

namespace {

// The spec of issue 16: proven "for all M <= 100000", but sem(0, 65536) == sem(0, 0) at M = 65537.
const std::string kWideSpec = "Symbolic M = 1;\nWhere(M >= 1, M <= 100000);\nDim x, y;\nGrid g1(x, y, 65536, M);\n"
                              "Grid g2(x, y, 65536, M);\nDep d({g2, Tile(x, y)}, {g1, Tile(x, y)});\n";

}  // namespace

TEST_CASE("tile count: a symbolic grid that passes 2^31 - 1 tiles for some admissible value is an error",
          "[tile-count]") {
  std::string errors = test::modelErrors(test::parseOrFail(kWideSpec));
  CHECK_THAT(errors, Catch::Contains("error: grid 'g1' has up to 6553600000 tiles for the admissible parameter "
                                     "values; the runtime counts a grid's tiles in 32 bits (at most 2147483647)"));
  CHECK_THAT(errors, Catch::Contains("note: with M = 32768"));  // the first M with 65536 * M > 2^31 - 1
  CHECK_THAT(errors, Catch::Contains("note: y extent M is at most 100000"));
  // Bounded so that it fits: accepted.
  std::string fitting = kWideSpec;
  fitting.replace(fitting.find("100000"), 6, "32767");
  CHECK(test::modelErrors(test::parseOrFail(fitting)).empty());
}

TEST_CASE("tile count: an extent of 2^64 (A*A with A = 2^32) is an error, not '?'", "[tile-count]") {
  std::string errors = test::modelErrors(test::parseOrFail(
      "Param A = 4294967296;\nDim x;\nGrid g1(x, A*A);\nGrid g2(x, 4);\nDep d({g2, Tile(x)}, {g1, Tile(x)});"));
  CHECK_THAT(errors, Catch::Contains("test.dep:3:6: error: grid 'g1' has up to 18446744073709551616 tiles"));
}

TEST_CASE("tile count: an extent without an upper bound is an error at the extent", "[tile-count]") {
  std::string errors = test::modelErrors(test::parseOrFail(
      "Symbolic M = 4;\nWhere(M >= 1);\nDim x, y;\nGrid g1(x, y, 4, M);\nGrid g2(x, y, 4, 4);\n"
      "Dep d({g2, Tile(x, y)}, {g1, Tile(x, 0)});"));
  CHECK_THAT(errors, Catch::Contains("test.dep:4:18: error: y extent of grid 'g1' (M) has no upper bound for the "
                                     "admissible parameter values"));
  CHECK_THAT(errors, Catch::Contains("bound the symbolic parameters it uses with Where(...)"));
}

TEST_CASE("tile count: two symbolic extents are bounded by the product of their maxima, and say so",
          "[tile-count]") {
  std::string errors = test::modelErrors(test::parseOrFail(
      "Symbolic M = 4, N = 4;\nWhere(M >= 1, M <= 100000, N >= 1, N <= 100000);\nDim x, y;\nGrid g1(x, y, N, M);\n"
      "Grid g2(x, y, 4, 4);\nDep d({g2, Tile(x, y)}, {g1, Tile(x, y)});"));
  CHECK_THAT(errors, Catch::Contains("grid 'g1' may have up to 10000000000 tiles"));
  CHECK_THAT(errors, Catch::Contains("the product of the extents' maxima"));
}

TEST_CASE("tile count: cusyncgen refuses the wide spec with exit 1 and writes no header", "[tile-count][cli]") {
  std::string path = test::writeTemporaryFile("wide.dep", kWideSpec);
  std::string out = (std::filesystem::path(path).parent_path() / "wide_out").string();
  auto result = test::runCusyncgen({path, "-o", out});
  INFO(result.out << result.err);
  CHECK(result.exitCode == 1);
  CHECK_THAT(result.err, Catch::Contains(path + ":4:6: error: grid 'g1' has up to 6553600000 tiles"));
  CHECK_THAT(result.err, Catch::Contains("  Grid g1(x, y, 65536, M);\n       ^\n"));
  CHECK_FALSE(std::filesystem::exists(std::filesystem::path(out) / "wide.h"));
  std::filesystem::remove_all(out);
}
