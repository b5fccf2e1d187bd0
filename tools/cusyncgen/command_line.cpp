#include "command_line.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace cusync::cusyncgen {
namespace {

bool isIdentifier(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) return false;
  for (char c : text) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// "NAME=VALUE" with an integer VALUE.
std::optional<std::string> parseDefinition(std::string_view definition, analysis::ParameterValues& overrides) {
  auto equals = definition.find('=');
  if (equals == std::string_view::npos) {
    return fmt::format("-D {}: expected NAME=VALUE", definition);
  }
  std::string_view name = definition.substr(0, equals);
  std::string_view value = definition.substr(equals + 1);
  if (!isIdentifier(name)) return fmt::format("-D {}: '{}' is not a parameter name", definition, name);
  std::int64_t number = 0;
  std::string_view digits = value;
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    return fmt::format("-D {}: value '{}' is not an integer{}", definition, value,
                       error == std::errc::result_out_of_range ? " that fits in 64 bits" : "");
  }
  overrides[std::string(name)] = number;
  return std::nullopt;
}

// --sms N, --occupancy N, --occupancy GRID=N: positive integers.
std::optional<std::string> parseMachineOption(const std::string& option, const std::string& value, Options& options) {
  std::string grid, number = value;
  if (auto equals = value.find('='); equals != std::string::npos && option == "--occupancy") {
    grid = value.substr(0, equals);
    number = value.substr(equals + 1);
    if (!isIdentifier(grid)) return fmt::format("{} {}: '{}' is not a grid name", option, value, grid);
  }
  std::int64_t parsed = 0;
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), parsed);
  if (error != std::errc() || end != number.data() + number.size() || parsed < 1 || parsed > 1000000)
    return fmt::format("{} {}: expected a positive integer", option, value);
  if (option == "--sms") options.smCount = parsed;
  else if (grid.empty()) options.defaultOccupancy = parsed;
  else options.occupancy[grid] = parsed;
  return std::nullopt;
}

}  // namespace

std::string usageText() {
  return "Usage: cusyncgen SPEC.dep [-D NAME=VALUE]... [--check] [-o OUT] [--json] [--sms N] [--occupancy [GRID=]N]...\n"
         "                 [--help] [--version]\n";
}

std::string helpText() {
  return usageText() +
         "\n"
         "Checks a cuSync dependency spec with isl and generates its synchronization policies.\n"
         "\n"
         "  SPEC.dep         the spec: parameters, grids, tiles and dependencies (see examples/*/*.dep)\n"
         "  -D NAME=VALUE    set parameter NAME (declared with Param or Symbolic) to the integer VALUE\n"
         "  --check          print a summary: grids, tiles per consumer tile for each dependency, verdict\n"
         "  -o OUT           write the generated policy header(s) into directory OUT\n"
         "  --json           print a machine-readable summary of the generated policies\n"
         "  --sms N          SM count for the wait-kernel / tile-order optimization analysis (default 132)\n"
         "  --occupancy N    blocks per SM of every kernel (default 1); GRID=N sets one grid's occupancy\n"
         "  --help           print this help\n"
         "  --version        print the version\n"
         "\n"
         "Every run checks that each producer tile a dependency reads lies inside its grid, for the given\n"
         "parameter values and for all values of symbolic parameters their constraints allow.\n"
         "\n"
         "Exit status: 0 ok; 1 errors in the spec (reported as file:line:col); 2 usage errors;\n"
         "3 a requested output (-o, --json) is not part of this build.\n";
}

CommandLineResult parseCommandLine(const std::vector<std::string>& arguments) {
  Options options;
  auto usageError = [](std::string message) { return CommandLineResult{std::nullopt, std::move(message)}; };
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string& argument = arguments[i];
    if (argument == "--help" || argument == "-h") {
      options.help = true;
    } else if (argument == "--version") {
      options.version = true;
    } else if (argument == "--check") {
      options.check = true;
    } else if (argument == "--json") {
      options.json = true;
    } else if (argument == "-o") {
      if (i + 1 >= arguments.size()) return usageError("-o needs a directory: -o OUT");
      if (options.outputDirectory) return usageError("-o given more than once");
      // An empty name would write the header into the current folder, which nobody asked for.
      if (arguments[i + 1].empty()) return usageError("-o needs a directory: the one given is empty");
      options.outputDirectory = arguments[++i];
    } else if (argument == "--sms" || argument == "--occupancy") {
      if (i + 1 >= arguments.size()) return usageError(argument + " needs a value");
      if (auto error = parseMachineOption(argument, arguments[++i], options)) return usageError(*error);
    } else if (argument == "-D") {
      if (i + 1 >= arguments.size()) return usageError("-D needs NAME=VALUE");
      if (auto error = parseDefinition(arguments[++i], options.overrides)) return usageError(*error);
    } else if (argument.rfind("-D", 0) == 0) {
      if (auto error = parseDefinition(std::string_view(argument).substr(2), options.overrides)) {
        return usageError(*error);
      }
    } else if (!argument.empty() && argument[0] == '-' && argument != "-") {
      return usageError(fmt::format("unknown option '{}'", argument));
    } else {
      if (!options.specPath.empty()) {
        return usageError(fmt::format("more than one spec file given ('{}' and '{}')", options.specPath, argument));
      }
      options.specPath = argument;
    }
  }
  if (!options.help && !options.version && options.specPath.empty()) return usageError("no spec file given");
  return {options, {}};
}

}  // namespace cusync::cusyncgen
