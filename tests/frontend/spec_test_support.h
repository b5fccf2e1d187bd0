// Helpers shared by the front-end tests.
#pragma once

#include <cusync/analysis/isl_model.h>
#include <cusync/dsl/diagnostic.h>
#include <cusync/dsl/spec.h>

#include <optional>
#include <string>
#include <vector>

namespace cusync::test {

// Absolute path of a file in the source tree, e.g. sourcePath("examples/mlp/gpt3_mlp.dep").
std::string sourcePath(const std::string& relative);
std::string readFile(const std::string& path);

// Parses text; fails the test (with the rendered diagnostics) when it does not parse.
spec::Spec parseOrFail(const std::string& text, const std::string& file = "test.dep");

// Parses text expecting errors; returns the rendered diagnostics (empty if it parsed).
std::string parseErrors(const std::string& text, const std::string& file = "test.dep");

// Builds an isl model, failing the test on errors.
analysis::IslModel modelOrFail(const spec::Spec& spec, analysis::ModelOptions options = {});

// Builds a model expecting errors; returns the rendered diagnostics.
std::string modelErrors(const spec::Spec& spec, analysis::ModelOptions options = {});

// Clears the locations of anonymous parts (expressions, tiles, ranges, constraints, tile sets, producers) and
// keeps those of named declarations (parameters, dimensions, grids, dependencies).
void clearAnonymousLocations(spec::Spec& spec);

// Runs the real cusyncgen binary; stdout and stderr separately, and the exit code.
struct CommandResult {
  int exitCode = -1;
  std::string out;
  std::string err;
};
CommandResult runCusyncgen(const std::vector<std::string>& arguments);

// A fresh file under a per-process temporary directory; returns its path.
std::string writeTemporaryFile(const std::string& name, const std::string& contents);

}  // namespace cusync::test
