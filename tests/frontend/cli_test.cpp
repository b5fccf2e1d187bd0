// cusyncgen end to end, through the real binary: the bundled specs, usage errors (exit 2), and every kind of bad
// spec (exit 1 with a located diagnostic, never a crash).
#include "spec_test_support.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <sys/wait.h>
#include <random>

using cusync::test::runCusyncgen;
using cusync::test::sourcePath;
using cusync::test::writeTemporaryFile;

namespace {

// Runs cusyncgen on `text` written to NAME and requires a spec error (exit 1) whose stderr contains `expected`.
void requireSpecError(const std::string& name, const std::string& text, const std::string& expected) {
  std::string path = writeTemporaryFile(name, text);
  auto result = runCusyncgen({path, "--check"});
  INFO("stderr:\n" << result.err);
  CHECK(result.exitCode == 1);
  CHECK_THAT(result.err, Catch::Contains(expected));
  CHECK(result.out.empty());
}

const std::string kTwoGrids = "Dim x, y;\nGrid g1(x, y, 4, 4);\nGrid g2(x, y, 4, 4);\n";

}  // namespace

TEST_CASE("cusyncgen --check on the GPT-3 MLP reports one row of g1.x tiles per consumer tile", "[cli]") {
  auto result = runCusyncgen({sourcePath("examples/mlp/gpt3_mlp.dep"), "--check"});
  INFO(result.err);
  REQUIRE(result.exitCode == 0);
  CHECK_THAT(result.out, Catch::Contains("g1(x, y): g1.x = 4*H/(8*TileN) = 48, g1.y = (M + TileM - 1)/TileM = 8; 384 tiles"));
  CHECK_THAT(result.out, Catch::Contains("per consumer tile: 1 row of g1.x = 48 tiles (along x: 48, y: 1); "
                                         "formula g1.x"));
  CHECK_THAT(result.out, Catch::Contains("ranged: x over Range(g1.x) = [0, 48), varies producer coordinate x"));
  CHECK_THAT(result.out, Catch::Contains("for every value of M the constraints allow"));
  CHECK_THAT(result.out, Catch::Contains("\nverdict: ok\n"));
}

TEST_CASE("cusyncgen --check accepts every bundled spec", "[cli]") {
  for (const char* file : {"examples/mlp/llama_mlp.dep", "examples/attention/attention.dep",
                           "examples/conv2d/conv2d.dep"}) {
    auto result = runCusyncgen({sourcePath(file), "--check"});
    INFO(file << "\n" << result.err);
    CHECK(result.exitCode == 0);
    CHECK_THAT(result.out, Catch::Contains("verdict: ok"));
  }
  auto attention = runCusyncgen({sourcePath("examples/attention/attention.dep"), "--check"});
  CHECK_THAT(attention.out, Catch::Contains("per consumer tile: 2 tiles (along x: 2, y: 1); formula 2"));
  CHECK_THAT(attention.out, Catch::Contains("per consumer tile: 1 column of gP.y = 8 tiles"));
}

TEST_CASE("cusyncgen --check proves the conv halo specs for every B and says the halo moves with the tile", "[cli]") {
  for (const char* file : {"examples/conv2d/conv2d_3x3.dep", "examples/conv2d/conv2d_bottleneck.dep",
                           "examples/conv2d/conv2d_stride2.dep"}) {
    auto result = runCusyncgen({sourcePath(file), "--check"});
    INFO(file << "\n" << result.err);
    CHECK(result.exitCode == 0);
    CHECK_THAT(result.out, Catch::Contains("for every value of B the constraints allow"));
    CHECK_THAT(result.out, Catch::Contains("RowSync: proven (symbolic, all B with 0 < B <= 32)"));
    CHECK_THAT(result.out, Catch::Contains("verdict: ok"));
  }
  auto halo = runCusyncgen({sourcePath("examples/conv2d/conv2d_3x3.dep"), "--check"});
  // Two channel tiles of two or three pixel tiles (the tile's own and those above and below it, within the image).
  CHECK_THAT(halo.out, Catch::Contains("per consumer tile: 4 to 6 tiles (depends on the consumer tile)"));
  CHECK_THAT(halo.out, Catch::Contains("(bounds depend on the consumer tile), varies producer coordinate y"));
}

TEST_CASE("cusyncgen -D changes parameter values and is checked", "[cli]") {
  auto result = runCusyncgen({sourcePath("examples/mlp/gpt3_mlp.dep"), "--check", "-D", "TileN=256", "-DM=512"});
  INFO(result.err);
  REQUIRE(result.exitCode == 0);
  CHECK_THAT(result.out, Catch::Contains("TileN = 256 (set by -D; default 128)"));
  CHECK_THAT(result.out, Catch::Contains("1 row of g1.x = 24 tiles"));
  auto violated = runCusyncgen({sourcePath("examples/mlp/gpt3_mlp.dep"), "-D", "M=5000"});
  CHECK(violated.exitCode == 1);
  CHECK_THAT(violated.err, Catch::Contains("gpt3_mlp.dep:10:15: error: constraint 'M <= 4096' does not hold for M = 5000"));
}

TEST_CASE("without --check cusyncgen prints a one-line verdict", "[cli]") {
  auto result = runCusyncgen({sourcePath("examples/conv2d/conv2d.dep")});
  CHECK(result.exitCode == 0);
  CHECK_THAT(result.out, Catch::Contains("ok (2 grid(s), 1 dependency, bounds verified)"));
}

TEST_CASE("--help and --version", "[cli]") {
  auto help = runCusyncgen({"--help"});
  CHECK(help.exitCode == 0);
  CHECK_THAT(help.out, Catch::StartsWith("Usage: cusyncgen SPEC.dep [-D NAME=VALUE]... [--check] [-o OUT]"));
  CHECK_THAT(help.out, Catch::Contains("Exit status: 0 ok; 1 errors in the spec"));
  auto version = runCusyncgen({"--version"});
  CHECK(version.exitCode == 0);
  CHECK_THAT(version.out, Catch::StartsWith("cusyncgen "));
}

TEST_CASE("usage errors exit 2", "[cli][errors]") {
  struct Case {
    std::vector<std::string> arguments;
    std::string message;
  };
  std::string spec = sourcePath("examples/mlp/gpt3_mlp.dep");
  for (const auto& c : std::vector<Case>{{{}, "no spec file given"},
                                         {{spec, "--frobnicate"}, "unknown option '--frobnicate'"},
                                         {{spec, spec}, "more than one spec file given"},
                                         {{spec, "-D"}, "-D needs NAME=VALUE"},
                                         {{spec, "-D", "H"}, "-D H: expected NAME=VALUE"},
                                         {{spec, "-D", "H=1.5"}, "value '1.5' is not an integer"},
                                         {{spec, "-D", "H=99999999999999999999"}, "that fits in 64 bits"},
                                         {{spec, "-D", "Q=4"}, "declares no parameter 'Q'"},
                                         {{spec, "-o"}, "-o needs a directory"}}) {
    auto result = runCusyncgen(c.arguments);
    INFO(result.err);
    CHECK(result.exitCode == 2);
    CHECK_THAT(result.err, Catch::Contains(c.message));
  }
}

TEST_CASE("-o either generates through cusync_codegen or says that code generation is not built", "[cli]") {
  std::string out = writeTemporaryFile("placeholder", "") + ".generated";
  auto result = runCusyncgen({sourcePath("examples/mlp/gpt3_mlp.dep"), "-o", out});
  if (result.exitCode == 3) {
    CHECK_THAT(result.err, Catch::Contains("code generation is not built into this cusyncgen"));
    CHECK_FALSE(std::filesystem::exists(out));
  } else {
    INFO(result.err);
    CHECK(result.exitCode == 0);
    CHECK(std::filesystem::is_directory(out));
  }
}

TEST_CASE("bad specs: syntax errors", "[cli][errors]") {
  requireSpecError("syntax.dep", "Dim x, y\nGrid g1(x, y, 4, 4);\n", "syntax.dep:2:1: error: expected ';'");
  requireSpecError("syntax2.dep", "Dim x;\nGrid g(x, 4));\n", "syntax2.dep:2:13: error: expected ';' after the "
                                                            "declaration, found ')'");
}

TEST_CASE("bad specs: unknown names", "[cli][errors]") {
  requireSpecError("unknown.dep", "Dim x;\nGrid g(x, N);\n", "unknown.dep:2:11: error: unknown name 'N'");
}

TEST_CASE("bad specs: redeclarations", "[cli][errors]") {
  requireSpecError("redeclared.dep", "Dim x, y;\nGrid x(x, 4);\n", "redeclared.dep:2:6: error: redeclaration of 'x'");
}

TEST_CASE("bad specs: non-affine x*y", "[cli][errors]") {
  requireSpecError("nonaffine.dep", kTwoGrids + "Dep d({g2, Tile(x, y)}, {g1, Tile(x*y, y)});\n",
                   "nonaffine.dep:4:36: error: tile coordinate is not affine: 'x*y' multiplies x by y");
}

TEST_CASE("bad specs: zero, negative and non-integer extents", "[cli][errors]") {
  requireSpecError("zero.dep", "Dim x;\nGrid g(x, 0);\nDep d({g, Tile(x)}, {g, Tile(x)});\n",
                   "zero.dep:2:11: error: x extent of grid 'g' is 0");
  requireSpecError("negative.dep", "Param N = 2;\nDim x;\nGrid g(x, 2 - 4*N);\nDep d({g, Tile(x)}, {g, Tile(x)});\n",
                   "x extent of grid 'g' is -6 (2 - 4*N = -6)");
  requireSpecError("fraction.dep", "Dim x;\nGrid g(x, 2.5);\nDep d({g, Tile(x)}, {g, Tile(x)});\n",
                   "fraction.dep:2:11: error: '2.5' is not an integer");
}

TEST_CASE("bad specs: division by zero", "[cli][errors]") {
  requireSpecError("divzero.dep", "Param T = 0;\nDim x;\nGrid g(x, 64/T);\nDep d({g, Tile(x)}, {g, Tile(x)});\n",
                   "divzero.dep:3:13: error: division by zero: in '64/T', T is 0");
}

TEST_CASE("bad specs: a dependency on an undeclared grid", "[cli][errors]") {
  requireSpecError("undeclared.dep", kTwoGrids + "Dep d({g2, Tile(x, y)}, {g3, Tile(x, y)});\n",
                   "undeclared.dep:4:26: error: unknown name 'g3'");
}

TEST_CASE("bad specs: a tile with the wrong number of dimensions", "[cli][errors]") {
  requireSpecError("arity.dep", kTwoGrids + "Dep d({g2, Tile(x, y)}, {g1, Tile(x)});\n",
                   "arity.dep:4:30: error: producer tile Tile(x) has 1 coordinate(s) but grid 'g1' has 2 dimension(s)");
}

TEST_CASE("bad specs: out-of-bounds dependency with a counterexample", "[cli][errors]") {
  requireSpecError("oob.dep", kTwoGrids + "Dep d({g2, Tile(x, y)}, {g1, Tile(x, y + 1)});\n",
                   "note: consumer tile g2[0, 3] reads producer tile g1[0, 4], but g1 is 4 x 4 tiles");
}

TEST_CASE("bad specs: empty file", "[cli][errors]") {
  requireSpecError("empty.dep", "", "empty.dep: error: the spec declares no dependency (Dep)");
}

TEST_CASE("bad specs: a 10 MB file", "[cli][errors]") {
  std::string big;
  big.reserve(10 << 20);
  while (big.size() < (10u << 20)) big += "Dim x;\n";
  big.resize(10u << 20);
  requireSpecError("big.dep", big, "error: spec file is 10485760 bytes; the limit is 1048576 bytes");
}

TEST_CASE("bad specs: binary garbage", "[cli][errors]") {
  std::mt19937 random(20241122);
  std::string garbage;
  for (int i = 0; i < 65536; ++i) garbage += static_cast<char>(random() & 0xff);
  requireSpecError("garbage.dep", garbage, "error: spec is not a text file (it contains a NUL byte)");
  std::string withoutNul;
  for (char c : garbage) withoutNul += c == '\0' ? '\x01' : c;
  requireSpecError("garbage2.dep", withoutNul, "error: too many errors; stopping after 20");
}

TEST_CASE("bad specs: a file that cannot be read", "[cli][errors]") {
  auto result = runCusyncgen({sourcePath("examples/no_such_spec.dep")});
  CHECK(result.exitCode == 1);
  CHECK_THAT(result.err, Catch::Contains("no_such_spec.dep: error: cannot read spec file"));
}

// Issue 16: `-o ""` wrote an empty-named header into the current folder; it is a usage error.
TEST_CASE("cusyncgen -o with an empty directory is a usage error and writes nothing", "[cli]") {
  std::string path = writeTemporaryFile("empty_output_dir.dep", kTwoGrids + "Dep d({g2, Tile(x, y)}, {g1, Tile(x, y)});");
  auto result = runCusyncgen({path, "-o", ""});
  CHECK(result.exitCode == 2);
  CHECK_THAT(result.err, Catch::Contains("-o needs a directory: the one given is empty"));
  CHECK(result.out.empty());
  CHECK_FALSE(std::filesystem::exists("empty_output_dir.h"));
  std::filesystem::remove("empty_output_dir.h");
}

// Issue 16: `--json --check` printed the text summary before the JSON; stdout is now one JSON document.
TEST_CASE("cusyncgen --json --check prints only JSON, the check summary inside it", "[cli]") {
  auto result = runCusyncgen({sourcePath("examples/mlp/gpt3_mlp.dep"), "--json", "--check"});
  INFO(result.err);
  REQUIRE(result.exitCode == 0);
  CHECK(result.out.rfind("{\n", 0) == 0);
  CHECK(result.out.size() > 2);
  CHECK(result.out.substr(result.out.size() - 2) == "}\n");
  CHECK_THAT(result.out, Catch::Contains("\"check\": \"spec gpt3_mlp ("));
  CHECK_THAT(result.out, Catch::Contains("verdict: ok\\n"));
  CHECK_THAT(result.out, !Catch::Contains("\nverdict: ok\n"));
}

// Issue 16: memory grew as the square of the number of Dim names (every dependency's isl space held all of them:
// 5000 names took 7 GB and 18 s, 20000 names 24 GB, 10^5 were killed). Now each takes well under 1 GB and a second.
TEST_CASE("cusyncgen handles 5000 to 100000 Dim names in bounded memory and time", "[cli]") {
  for (int names : {5000, 20000, 100000}) {
    std::string text = "Dim d0";
    for (int i = 1; i < names; ++i) text += ", d" + std::to_string(i);
    text += ";\n" + kTwoGrids + "Dep d({g2, Tile(x, y)}, {g1, ForAll(Tile(x, y), x, Range(g1.x))});\n";
    std::string path = writeTemporaryFile("many_dimensions.dep", text);
    std::string command = "ulimit -v 1048576 && timeout 60 '" + std::string(CUSYNCGEN_PATH) + "' '" + path +
                          "' --check > /dev/null 2>&1";
    int status = std::system(command.c_str());
    INFO(names << " Dim names");
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    std::filesystem::remove(path);
  }
}

// A fuzzer-made variant of the stride-2 convolution spec (session 33): its 3x3 halo range nests floor divisions that
// kept one policy proof in isl for more than four minutes. Each proof now has an operation budget
// (analysis/isl_operation_budget.h): the proof it cannot decide is reported as such, the symbolic proof falls back to
// the given values, and cusyncgen finishes.
TEST_CASE("a proof isl cannot decide within its operation budget is reported and cusyncgen finishes", "[cli]") {
  const std::string spec = R"(Param P = 29, Q = 28;
Param C1 = 128, C2 = 128;
Param TileM = 64, TileN = 64;
Symbolic B = 8;
Where(B >= 1, B <= 32);
Dim x, y;
Grid g1(x, y, C1/TileN, (B*4*P*Q + TileM - 1)/TileM);
Grid g2(x, y, C2/TileN, (B*P*Q + TileM - 1)/TileM);
Tile cons(x, y), prod(x, y);
ForAll halo(ForAll(prod, x, Range(g1.x)), y,
            Range((2*y*TileM + 1*Q*(y*TileM/Q) - 2*Q*min(y*TileM/Q % P, 1) - min(y*TileM % Q, 1))/TileM,
                  min(g1.y, (2*((y + 1)*TileM - 1) + 2*Q*(((y + 1)*TileM - 1)/Q) + 2*Q + 1)/TileM + 1)));
Dep dep3x3({g2, cons}, {g1, halo});
)";
  const std::string path = writeTemporaryFile("undecidable_in_budget.dep", spec);
  const auto start = std::chrono::steady_clock::now();
  auto result = runCusyncgen({path, "--check"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("stdout:\n" << result.out << "\nstderr:\n" << result.err << "\nseconds: " << seconds);
  CHECK(result.exitCode == 0);  // the bounds hold; only some policies are not proven
  CHECK_THAT(result.out + result.err, Catch::Contains("REJECTED: isl did not decide it within its budget of"));
  CHECK(seconds < 300);  // was more than four minutes on one proof alone
}
