// The code-generation step of cusyncgen (-o OUT, --json): a call into the cusync_codegen library when it is part of
// the build. Without it, asking for generated output is an error (exit 3), never fake output.
#pragma once

#include "checked_spec.h"
#include "command_line.h"

#include <ostream>

namespace cusync::cusyncgen {

// True when this build links cusync_codegen.
bool codeGenerationAvailable();

// Writes what `options` asks for (headers under options.outputDirectory, JSON on `out`); returns the exit code.
int generate(const CheckedSpec& checked, const Options& options, std::ostream& out, std::ostream& err);

}  // namespace cusync::cusyncgen
