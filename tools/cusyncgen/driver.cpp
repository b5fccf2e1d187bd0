#include "driver.h"

#include "check_summary.h"
#include "generation.h"

#include <cusync/analysis/bounds_check.h>
#include <cusync/dsl/parser.h>

#include <fmt/format.h>

#include <stdexcept>

namespace cusync::cusyncgen {
namespace {

void printDiagnostics(const dsl::Diagnostics& diagnostics, const dsl::SourceTexts& sources,
                      const std::string& specPath, std::ostream& err) {
  for (auto diagnostic : diagnostics.all()) {
    // Whole-spec diagnostics (no location) are attributed to the spec file.
    if (diagnostic.location.file.empty()) diagnostic.location.file = specPath;
    err << dsl::render(diagnostic, sources);
  }
}

}  // namespace

std::optional<CheckedSpec> checkSpec(const Options& options, std::ostream& err, int& exitCode) {
  exitCode = kExitSpecError;
  dsl::Diagnostics diagnostics;
  dsl::SourceTexts sources;
  auto fail = [&]() -> std::optional<CheckedSpec> {
    printDiagnostics(diagnostics, sources, options.specPath, err);
    err << fmt::format("cusyncgen: {} error(s) in {}\n", diagnostics.errorCount(), options.specPath);
    return std::nullopt;
  };

  auto spec = dsl::parseSpecFile(options.specPath, sources, diagnostics);
  if (!spec) return fail();

  // -D for a name the spec does not declare is a mistake on the command line, not in the spec.
  for (const auto& [name, value] : options.overrides) {
    bool declared = false;
    std::string names;
    for (const auto& p : spec->parameters) {
      declared = declared || p.name == name;
      names += (names.empty() ? "" : ", ") + p.name;
    }
    if (!declared) {
      err << fmt::format("cusyncgen: error: -D {}={}: {} declares no parameter '{}' (it declares: {})\n", name,
                         value, options.specPath, name, names.empty() ? "none" : names);
      exitCode = kExitUsageError;
      return std::nullopt;
    }
  }

  analysis::ModelOptions symbolicOptions;
  symbolicOptions.overrides = options.overrides;
  auto symbolicModel = analysis::IslModel::build(*spec, symbolicOptions, diagnostics);
  if (!symbolicModel) return fail();
  analysis::checkBounds(*symbolicModel, diagnostics);
  if (diagnostics.hasErrors()) return fail();

  analysis::ModelOptions boundOptions = symbolicOptions;
  boundOptions.bindSymbolicParameters = true;
  auto boundModel = analysis::IslModel::build(*spec, boundOptions, diagnostics);
  if (!boundModel) return fail();

  std::vector<analysis::DependencyFacts> facts = analysis::computeDependencyFacts(*boundModel);
  printDiagnostics(diagnostics, sources, options.specPath, err);  // warnings, if any
  exitCode = kExitOk;
  return CheckedSpec{options.specPath,        std::move(*spec), std::move(*symbolicModel),
                     std::move(*boundModel),  std::move(facts), std::move(sources)};
}

int runCusyncgen(const std::vector<std::string>& arguments, std::ostream& out, std::ostream& err) {
  CommandLineResult commandLine = parseCommandLine(arguments);
  if (!commandLine.options) {
    err << "cusyncgen: error: " << commandLine.error << '\n' << usageText() << "Try 'cusyncgen --help'.\n";
    return kExitUsageError;
  }
  const Options& options = *commandLine.options;
  if (options.help) {
    out << helpText();
    return kExitOk;
  }
  if (options.version) {
    out << "cusyncgen " << CUSYNC_VERSION << '\n';
    return kExitOk;
  }

  int exitCode = kExitOk;
  auto checked = checkSpec(options, err, exitCode);
  if (!checked) return exitCode;

  // With --json, stdout is one JSON document: the --check summary goes into it as the field "check".
  if (options.check && !options.json) out << checkSummary(*checked);
  // --check also lists the policy candidates with their proofs or the reason they were rejected.
  if (options.outputDirectory || options.json || options.check) return generate(*checked, options, out, err);
  if (!options.check) {
    out << fmt::format("{}: ok ({} grid(s), {} dependenc{}, bounds verified)\n", options.specPath,
                       checked->spec.grids.size(), checked->spec.dependencies.size(),
                       checked->spec.dependencies.size() == 1 ? "y" : "ies");
  }
  return kExitOk;
}

}  // namespace cusync::cusyncgen
