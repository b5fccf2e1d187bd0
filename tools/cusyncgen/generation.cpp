#include "generation.h"

#include "check_summary.h"

#include <cusync/codegen/generation.h>
#include <cusync/codegen/header_emitter.h>
#include <cusync/codegen/summary.h>

#include <filesystem>
#include <fstream>

namespace cusync::cusyncgen {

bool codeGenerationAvailable() { return true; }

// Derives, proves and emits with cusync_codegen. Candidates that fail their proof are not emitted and are listed
// in the summary with the reason; that is a result, not an error. Errors: the output cannot be written (exit 1).
int generate(const CheckedSpec& checked, const Options& options, std::ostream& out, std::ostream& err) {
  codegen::OptimizationOptions machine;
  machine.smCount = options.smCount;
  machine.defaultOccupancy = options.defaultOccupancy;
  machine.occupancy = options.occupancy;
  for (const auto& [grid, occupancy] : options.occupancy) {
    bool known = false;
    for (const spec::Grid& declared : checked.spec.grids) known = known || declared.name == grid;
    if (!known) {
      err << "cusyncgen: error: --occupancy " << grid << "=" << occupancy << ": the spec declares no grid '" << grid
          << "'\n";
      return kExitUsageError;
    }
  }
  codegen::Generation generation =
      codegen::generate(codegen::ProofModels{checked.symbolicModel, checked.boundModel}, machine);

  if (options.json)
    out << codegen::jsonSummary(generation, options.check ? checkSummary(checked) : std::string());
  else
    out << codegen::textSummary(generation);

  if (options.outputDirectory) {
    std::filesystem::path directory(*options.outputDirectory);
    std::error_code error;
    std::filesystem::create_directories(directory, error);
    std::filesystem::path header = directory / codegen::headerFileName(generation);
    std::ofstream file(header, std::ios::binary);
    if (error || !file) {
      err << "cusyncgen: error: cannot write " << header.string()
          << (error ? ": " + error.message() : std::string()) << "\n";
      return kExitSpecError;
    }
    file << codegen::emitHeader(generation, checked.specPath);
    if (!file.flush()) {
      err << "cusyncgen: error: cannot write " << header.string() << "\n";
      return kExitSpecError;
    }
    if (!options.json) out << "wrote " << header.string() << "\n";
  }
  return kExitOk;
}

}  // namespace cusync::cusyncgen
