// cusyncgen from arguments to exit code: parse the spec, build the isl model, check bounds, compute dependency
// facts, print the --check summary, hand over to code generation. main() only forwards argv and the streams,
// so tests can run the whole command in-process as well as through the binary.
#pragma once

#include "checked_spec.h"
#include "command_line.h"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace cusync::cusyncgen {

int runCusyncgen(const std::vector<std::string>& arguments, std::ostream& out, std::ostream& err);

// The front end alone: every check, diagnostics rendered to `err`. nullopt when the spec (exitCode 1) or the
// command line (exitCode 2, e.g. -D of an undeclared parameter) has errors.
std::optional<CheckedSpec> checkSpec(const Options& options, std::ostream& err, int& exitCode);

}  // namespace cusync::cusyncgen
