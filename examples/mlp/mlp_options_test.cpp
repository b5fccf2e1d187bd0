// Host tests of the MLP examples' shared command line (mlp_options.h): --reference and a program's own variant
// names. No GPU, no CUDA.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "mlp_options.h"

using namespace cusync::examples;

namespace {

// parseMlpOptions over `arguments` (the program name first); it creates no file.
MlpOptions parse(const MlpProgram& program, std::vector<std::string> arguments) {
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  return parseMlpOptions(int(argv.size()), argv.data(), program);
}

MlpProgram fusedLikeProgram() {
  MlpProgram program{"mlp_options_test", "A test.", "mlp_options_test.csv", ""};
  program.variantNames = {"cuBLAS", "Fused", "Fused-StreamSync"};
  return program;
}

}  // namespace

TEST_CASE("--reference: cuBLASLt unless direct is asked for", "[mlp][options]") {
  const MlpProgram program = fusedLikeProgram();
  CHECK(parse(program, {"mlp_options_test"}).reference == ReferenceGemms::CublasLt);
  CHECK(parse(program, {"mlp_options_test", "--reference", "direct"}).reference == ReferenceGemms::Direct);
  CHECK(parse(program, {"mlp_options_test", "--reference", "direct", "--reference", "cublaslt"}).reference ==
        ReferenceGemms::CublasLt);
}

TEST_CASE("--reference takes exactly cublaslt or direct", "[mlp][options]") {
  CHECK(parseReferenceGemms("cublaslt") == ReferenceGemms::CublasLt);
  CHECK(parseReferenceGemms("direct") == ReferenceGemms::Direct);
  for (const char* text : {"", "cuBLASLt", "cublas", "Direct", "direct ", "none"}) {
    INFO(text);
    CHECK_FALSE(parseReferenceGemms(text).has_value());
  }
}

TEST_CASE("--reference does not restrict a tuned program's search", "[mlp][options]") {
  MlpProgram program = fusedLikeProgram();
  program.tuned = true;
  CHECK_FALSE(parse(program, {"mlp_options_test", "--reference", "direct"}).searchRestricted);
}

TEST_CASE("--variants selects by name, every variant when it names none", "[mlp][options]") {
  const MlpProgram program = fusedLikeProgram();
  const MlpOptions all = parse(program, {"mlp_options_test"});
  CHECK(variantSelected(all, "cuBLAS"));
  CHECK(variantSelected(all, "Fused-StreamSync"));
  const MlpOptions fusedOnly = parse(program, {"mlp_options_test", "--variants", "Fused,Fused-StreamSync"});
  CHECK_FALSE(variantSelected(fusedOnly, "cuBLAS"));
  CHECK(variantSelected(fusedOnly, "Fused"));
  CHECK(variantSelected(fusedOnly, "Fused-StreamSync"));
  CHECK_FALSE(variantSelected(fusedOnly, "Fused-Stream"));  // whole names only
}

TEST_CASE("--help names --reference and a program's variants", "[mlp][options]") {
  const std::string usage = mlpUsage(fusedLikeProgram());
  CHECK(usage.find("--reference cublaslt|direct") != std::string::npos);
  CHECK(usage.find("variants to run, of cuBLAS, Fused and Fused-StreamSync (default: all)") != std::string::npos);
  const std::string unnamed = mlpUsage(MlpProgram{"mlp_options_test", "A test.", "mlp_options_test.csv", ""});
  CHECK(unnamed.find("--variants a,b      variants to run (default: all)") != std::string::npos);
}

TEST_CASE("joinedNames: commas, then 'and' before the last", "[mlp][options]") {
  CHECK(joinedNames({}) == "");
  CHECK(joinedNames({"a"}) == "a");
  CHECK(joinedNames({"a", "b"}) == "a and b");
  CHECK(joinedNames({"a", "b", "c"}) == "a, b and c");
}
