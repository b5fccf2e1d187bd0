// Command-line options shared by the MLP examples (GPT-3: mlp_example, LLaMA: mlp_llama_example, the fused chain:
// mlp_fused_example). Host header.
//
// Common usage: [--m 1,8,...] [--pairs N] [--samples N] [--csv FILE] [--check-only] [--configs a,b]
//               [--variants a,b] [--orders row,g8,...] [--streamk] [--baselines-only] [--reference cublaslt|direct]
//               [--verbose] [--help]
//               and, for the programs that run a tuned configuration by default (MlpProgram::tuned):
//               [--search] [--tuning-table FILE]
// A program may accept more arguments through `extraArgument` (it is asked first about every unknown argument) and
// describes them in MlpProgram::extraOptions for --help. Everything here runs before any CUDA call, so a bad command
// line is reported (exit 2) on a machine without a GPU too.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/command_line_numbers.h"

// The shipped table's path, for --help (the examples' CMakeLists.txt defines CUSYNC_SHIPPED_TUNING_TABLE).
#ifdef CUSYNC_SHIPPED_TUNING_TABLE
#define CUSYNC_SHIPPED_TUNING_TABLE_TEXT CUSYNC_SHIPPED_TUNING_TABLE
#else
#define CUSYNC_SHIPPED_TUNING_TABLE_TEXT "examples/mlp/tuning_table.json"
#endif

namespace cusync::examples {

// What the reference's GEMMs run on (--reference): cuBLASLt, or the direct kernel (common/direct_gemm.cuh), which
// calls no library, so that with the cuBLAS baseline left out (--variants) a compute-sanitizer run launches no cuBLAS
// kernel; racecheck reports hazards inside cuBLAS's own kernels (docs/GPU_NOTES.md).
enum class ReferenceGemms { CublasLt, Direct };

// The value --reference takes: cublaslt or direct; nullopt for anything else.
inline std::optional<ReferenceGemms> parseReferenceGemms(const std::string& text) {
  if (text == "cublaslt") return ReferenceGemms::CublasLt;
  if (text == "direct") return ReferenceGemms::Direct;
  return std::nullopt;
}

struct MlpOptions {
  std::string program;  // for messages, e.g. mlp_example
  std::vector<int> ms{1, 8, 64, 128, 256, 512, 1024, 2048, 4096};
  int pairsPerGraph = 10;
  int samples = 9;
  int warmupMilliseconds = 0;  // sustained warm-up before each timing (graph_timer.cuh): steady power state
  std::string csvPath;
  bool checkOnly = false;
  bool verbose = false;
  bool streamK = false;
  bool baselinesOnly = false;
  std::vector<std::string> configs;  // tile configurations to try (empty: all registered)
  std::vector<std::string> variants;  // variants to run (empty: all)
  std::vector<std::string> orders{"row", "g8"};  // tile orders to try (see tile_orders.h)
  ReferenceGemms reference = ReferenceGemms::CublasLt;
  // Programs with MlpProgram::tuned: run the tuning table's entry per M (tuned_runs.h) unless --search or an option
  // that restricts the search (`searchRestricted`: --configs, --variants, --orders, or a program's own) asks for
  // the exhaustive search.
  bool search = false;
  bool searchRestricted = false;
  std::string tuningTable;  // --tuning-table FILE
  // Seed of the random inputs: fresh each run (the clock) unless --seed replays a run, e.g. one that failed.
  std::optional<std::uint64_t> seed;
  std::uint64_t seedOrClock() const {
    return seed ? *seed
                : static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  }
};

// Whether --configs selects the configuration `name` (every one when it names none).
inline bool configSelected(const MlpOptions& options, const std::string& name) {
  return options.configs.empty() ||
         std::find(options.configs.begin(), options.configs.end(), name) != options.configs.end();
}

// Whether --variants selects the variant named `name` (every one when it names none).
inline bool variantSelected(const MlpOptions& options, const std::string& name) {
  return options.variants.empty() ||
         std::find(options.variants.begin(), options.variants.end(), name) != options.variants.end();
}

// --interleave's usage lines, for the programs whose extraArgument takes it (their enqueue functions own what they
// launch, so MlpResults::interleaveTimings can time them after their M's other variants).
inline constexpr const char* kInterleaveUsage =
    "  --interleave        time all variants of an M together, in rounds that interleave them, after one warm-up\n"
    "                      of --warmup-ms over all of them (each is checked first and again after timing)\n";

inline std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

// Takes the value of the argument being parsed (exits with a message when there is none).
using ArgumentValue = std::function<std::string()>;
// Returns true when it consumed `argument` (calling `value` for its value, if it has one).
using ExtraArgument = std::function<bool(const std::string& argument, const ArgumentValue& value)>;

// What --help says about a program beyond the common options.
struct MlpProgram {
  std::string name;          // for messages, e.g. mlp_example
  std::string summary;       // one line: what the program measures
  std::string defaultCsv;    // where results go without --csv
  std::string extraOptions;  // usage lines of the options its `extraArgument` takes ("" if none)
  bool tuned = false;        // runs the tuning table's configuration by default; takes --search, --tuning-table
  // The names --variants may give; a name not among them is a usage error. Empty: not checked here (the program
  // matches the names itself).
  std::vector<std::string> variantNames;
};

// "a, b and c".
inline std::string joinedNames(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return text;
}

inline std::string mlpUsage(const MlpProgram& program) {
  const std::string searchOptions =
      program.name == "mlp_llama_example" ? "--configs, --variants, --orders, --swiglu-columns and --gate-up-order"
                                          : "--configs, --variants and --orders";
  const std::string tuned =
      !program.tuned
          ? std::string()
          : "\nBy default, at each M: the baselines (cuBLAS; Stream-K with --streamk) and, from the tuning table's\n"
            "entry for this GPU (name, SM count), model and the nearest tuned M (log scale, ties to the larger):\n"
            "the tuned cusync variant, StreamSync on the same kernels, and StreamSync on its own best ones. Where\n"
            "the table has no entry it says so and searches. --search runs every variant x tile configuration x\n"
            "split-K x tile order instead (tens of minutes); " + searchOptions + "\n"
            "restrict that search and imply --search.\n";
  const std::string tunedOptions =
      !program.tuned ? std::string()
                     : "  --search            exhaustive search instead of the tuned configuration\n"
                       "  --tuning-table FILE the tuning table (default: $CUSYNC_EXAMPLE_TUNING_TABLE, else\n"
                       "                      " CUSYNC_SHIPPED_TUNING_TABLE_TEXT ")\n";
  const std::string variants =
      program.variantNames.empty()
          ? "  --variants a,b      variants to run (default: all)\n"
          : "  --variants a,b      variants to run, of " + joinedNames(program.variantNames) + " (default: all)\n";
  return "Usage: " + program.name + " [options]\n" + program.summary + "\n" + tuned + "\nOptions:\n" +
         "  --m M1,M2,...       token counts M (positive; default 1,8,64,128,256,512,1024,2048,4096)\n"
         "  --pairs N           MLPs per timed CUDA graph (default 10)\n"
         "  --samples N         timed graph launches per variant (default 9)\n"
         "  --warmup-ms N       replay each variant for N ms before timing it, so that it is timed in the power\n"
         "                      state it would run in, not in a burst after idle time (default 0)\n"
         "  --csv FILE          results (default " + program.defaultCsv + ")\n"
         "  --check-only        check correctness, time nothing\n"
         "  --configs a,b       tile configurations to try (default: every registered one)\n"
         + variants +
         "  --orders row,g8,... tile orders to try: row, gN (groups of N rows), col, or P:C (producer:consumer)\n"
         "  --streamk           also run CUTLASS Stream-K\n"
         "  --baselines-only    only the baselines (cuBLAS, Stream-K)\n"
         "  --reference cublaslt|direct\n"
         "                      what the reference's GEMMs run on (default cublaslt); direct: a plain CUDA kernel, no\n"
         "                      cuBLAS, for compute-sanitizer runs (leave the cuBLAS baseline out with --variants)\n"
         "  --verbose           print every variant's result\n"
         "  --seed N            seed of the random inputs (default: the clock; printed, so a run can be replayed)\n" +
         tunedOptions + program.extraOptions +
         "  --help              print this help\n"
         "\nExit status: 0 every result correct, 1 a wrong result or nothing to run, 2 bad command line, 77 no CUDA "
         "device.\n";
}

inline MlpOptions parseMlpOptions(int argc, char** argv, const MlpProgram& program,
                                  const ExtraArgument& extraArgument = {}) {
  MlpOptions options;
  options.program = program.name;
  options.csvPath = program.defaultCsv;
  const std::string& name = program.name;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const ArgumentValue value = [&]() -> std::string {
      if (i + 1 >= argc) exitWithUsageError(name, arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", mlpUsage(program).c_str());
      std::exit(0);
    }
    if (extraArgument && extraArgument(arg, value)) continue;
    if (arg == "--m") {
      options.ms = positiveIntListArgument(name, arg, value());
    } else if (arg == "--pairs") {
      options.pairsPerGraph = positiveIntArgument(name, arg, value());
    } else if (arg == "--samples") {
      options.samples = positiveIntArgument(name, arg, value());
    } else if (arg == "--warmup-ms") {
      options.warmupMilliseconds = warmupMillisecondsArgument(name, arg, value());
    } else if (arg == "--csv") {
      options.csvPath = value();
    } else if (arg == "--streamk") {
      options.streamK = true;
    } else if (arg == "--baselines-only") {
      options.baselinesOnly = true;
      options.streamK = true;
    } else if (arg == "--verbose") {
      options.verbose = true;
    } else if (arg == "--check-only") {
      options.checkOnly = true;
    } else if (arg == "--variants") {
      options.variants = splitList(value());
      options.searchRestricted = true;
      for (const std::string& variant : options.variants)
        if (!program.variantNames.empty() && std::find(program.variantNames.begin(), program.variantNames.end(),
                                                       variant) == program.variantNames.end())
          exitWithUsageError(name, "--variants: unknown variant '" + variant + "' (its variants are " +
                                       joinedNames(program.variantNames) + ")");
    } else if (arg == "--reference") {
      const std::string text = value();
      const std::optional<ReferenceGemms> reference = parseReferenceGemms(text);
      if (!reference) exitWithUsageError(name, "--reference takes cublaslt or direct, not '" + text + "'");
      options.reference = *reference;
    } else if (arg == "--orders") {
      options.orders = splitList(value());
      options.searchRestricted = true;
    } else if (arg == "--configs") {
      options.configs = splitList(value());
      options.searchRestricted = true;
    } else if (program.tuned && arg == "--search") {
      options.search = true;
    } else if (program.tuned && arg == "--tuning-table") {
      options.tuningTable = value();
      if (options.tuningTable.empty()) exitWithUsageError(name, "--tuning-table needs a file name");
    } else if (arg == "--seed") {
      options.seed = static_cast<std::uint64_t>(integerArgument(name, arg, value(), 0, LLONG_MAX));
    } else {
      exitWithUsageError(name, "unknown argument '" + arg + "'");
    }
  }
  if (!options.csvPath.empty()) requireWritableOutput(name, "--csv", options.csvPath);
  return options;
}

}  // namespace cusync::examples
