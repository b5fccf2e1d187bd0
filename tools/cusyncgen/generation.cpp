#include "generation.h"

namespace cusync::cusyncgen {

// Until the policy generator (cusync_codegen) is wired in here, generation reports that it is not built.
bool codeGenerationAvailable() { return false; }

int generate(const CheckedSpec&, const Options& options, std::ostream&, std::ostream& err) {
  err << "cusyncgen: error: code generation is not built into this cusyncgen (the cusync_codegen library is "
         "missing), so "
      << (options.outputDirectory ? "-o" : "--json")
      << " cannot be honoured; the spec itself was checked (use --check for the summary)\n";
  return kExitNotBuilt;
}

}  // namespace cusync::cusyncgen
