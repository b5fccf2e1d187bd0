// cusyncgen's command line: `cusyncgen SPEC.dep [-D NAME=VALUE]... [--check] [-o OUT] [--json]`.
#pragma once

#include <cusync/analysis/isl_model.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cusync::cusyncgen {

// Exit codes, as documented in --help.
inline constexpr int kExitOk = 0;
inline constexpr int kExitSpecError = 1;      // the spec is wrong: diagnostics on stderr
inline constexpr int kExitUsageError = 2;     // the command line is wrong
inline constexpr int kExitNotBuilt = 3;       // a requested feature is not part of this build

struct Options {
  std::string specPath;
  analysis::ParameterValues overrides;  // -D NAME=VALUE, in order given (a later -D for a name wins)
  bool check = false;
  bool json = false;
  std::optional<std::string> outputDirectory;  // -o OUT
  bool help = false;
  bool version = false;
  // The GPU the W/T optimization analysis assumes: --sms N, --occupancy N (every kernel) or GRID=N (one grid).
  std::int64_t smCount = 132;
  std::int64_t defaultOccupancy = 1;
  std::map<std::string, std::int64_t> occupancy;
};

struct CommandLineResult {
  std::optional<Options> options;  // nullopt: usage error, message in `error`
  std::string error;
};

CommandLineResult parseCommandLine(const std::vector<std::string>& arguments);

std::string usageText();
std::string helpText();

}  // namespace cusync::cusyncgen
