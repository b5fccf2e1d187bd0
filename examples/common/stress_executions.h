// The stress tests' command line: --executions N (chain executions in all) and --help. Parsed before any CUDA call,
// so that a bad command line is reported on a machine without a GPU too. Host header.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/command_line_numbers.h"

namespace cusync::examples {

// Returns N, or `defaultExecutions` without the option; prints `usage` and exits 0 for --help; exits 2 with the
// program's name and the word for anything else.
inline long long parseStressExecutions(int argc, char** argv, const char* program, const char* usage,
                                       long long defaultExecutions) {
  long long executions = defaultExecutions;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", usage);
      std::exit(0);
    } else if (arg == "--executions") {
      if (i + 1 >= argc) exitWithUsageError(program, arg + " needs a value");
      executions = integerArgument(program, arg, argv[++i], 1, 1000000000000LL);
    } else {
      exitWithUsageError(program, "unknown argument '" + arg + "'");
    }
  }
  return executions;
}

}  // namespace cusync::examples
