// What a default run of mlp_example / mlp_llama_example runs at each M: the tuning table's entry for this device,
// model and the nearest measured M (tuning_table.h), or the exhaustive search (--search) when there is none. Host
// header: loadTuningSetup runs before any CUDA call, so a missing or malformed table named on the command line is a
// command-line error (exit 2) on a machine without a GPU too.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "mlp_options.h"
#include "mlp_variants.h"
#include "tuning_table.h"

#ifndef CUSYNC_SHIPPED_TUNING_TABLE
#define CUSYNC_SHIPPED_TUNING_TABLE ""
#endif

namespace cusync::examples {

// Search, or the table the tuned runs come from.
struct TuningSetup {
  bool search = true;
  std::optional<TuningTable> table;
};

// --search, or an option that restricts the search (--configs, --variants, --orders, LLaMA's SwiGLU options):
// search. Otherwise the table: --tuning-table, else $CUSYNC_EXAMPLE_TUNING_TABLE, else the shipped one. A table
// named by the option or the variable that cannot be read, and any malformed table, stop the program (exit 2); a
// missing shipped table (a binary moved out of its build tree) is said on stdout and the run searches.
inline TuningSetup loadTuningSetup(const MlpOptions& options) {
  TuningSetup setup;
  if (options.search || options.searchRestricted) {
    if (!options.tuningTable.empty())
      std::printf("%s: --tuning-table is not read: %s\n", options.program.c_str(),
                  options.search ? "--search searches every option"
                                 : "an option that restricts the search (--configs, --variants, --orders, ...) "
                                   "implies --search");
    return setup;
  }
  if (options.baselinesOnly) return setup;  // nothing tuned runs
  const TuningTablePath where =
      tuningTablePath(options.tuningTable, std::getenv(kExampleTuningTableEnvironment), CUSYNC_SHIPPED_TUNING_TABLE);
  if (where.path.empty()) {
    std::printf("%s: no tuning table compiled in and none named (--tuning-table): running the exhaustive search\n",
                options.program.c_str());
    return setup;
  }
  TuningTableResult loaded = loadTuningTable(where.path);
  if (!loaded.table) {
    const bool missingShipped = !where.explicitlyNamed && loaded.error == where.path + ": cannot read the tuning table";
    if (missingShipped) {
      std::printf("%s: %s (the shipped table): running the exhaustive search\n", options.program.c_str(),
                  loaded.error.c_str());
      return setup;
    }
    std::fprintf(stderr, "%s: %s (from %s)\n", options.program.c_str(), loaded.error.c_str(), where.origin.c_str());
    std::exit(2);
  }
  setup.search = false;
  setup.table = std::move(loaded.table);
  return setup;
}

inline std::optional<VariantSpec> variantNamed(const std::string& name) {
  for (const VariantSpec& variant : allVariants())
    if (variant.name() == name) return variant;
  return std::nullopt;
}

inline const TileConfig* configNamed(const std::vector<TileConfig>& configs, const std::string& name) {
  for (const TileConfig& config : configs)
    if (config.name == name) return &config;
  return nullptr;
}

// One run of the default set: a variant on a configuration (tile config, split-K, orders, LLaMA knobs).
struct TunedRun {
  VariantSpec variant;
  const TileConfig* config;
  TunedKernels kernels;
};

// The runs at one M, or nullopt to search it. Says on stdout which entry was chosen (its M and source) or why none.
// Runs: StreamSync on the tuned variant's kernels (the same tiles, split and order: only the synchronization
// differs), StreamSync on its own best configuration of the same search when that differs and is compiled in, and
// the tuned variant.
inline std::optional<std::vector<TunedRun>> tunedRuns(const TuningSetup& setup, const std::string& program,
                                                      const std::string& device, int sms, const std::string& model,
                                                      int hidden, int intermediate, int m,
                                                      const std::vector<TileConfig>& configs) {
  if (setup.search) return std::nullopt;
  const TuningTable& table = *setup.table;
  const TuningEntry* entry = nearestTuningEntry(table, device, sms, model, hidden, intermediate, m);
  if (!entry) {
    std::printf("%s: M=%d: %s has no entry for %s (%d SMs), %s H=%d I=%d: running the exhaustive search (as "
                "--search; retune: examples/mlp/README.md)\n",
                program.c_str(), m, table.path.c_str(), device.c_str(), sms, model.c_str(), hidden, intermediate);
    return std::nullopt;
  }
  const std::optional<VariantSpec> variant = variantNamed(entry->variant);
  const TileConfig* config = configNamed(configs, entry->kernels.config);
  if (!variant || !config) {
    std::printf("%s: M=%d: the tuned entry (M=%d, %s) names %s '%s', which this build does not have "
                "(CUSYNC_GEMM_CONFIGS / the rewriter): running the exhaustive search\n",
                program.c_str(), m, entry->m, entry->source.c_str(), variant ? "the tile configuration" : "the variant",
                variant ? entry->kernels.config.c_str() : entry->variant.c_str());
    return std::nullopt;
  }
  const VariantSpec streamSync{Ordering::StreamSync, PolicyKind::TileSync, LoadOrder::WaitThenLoad};
  std::vector<TunedRun> runs{{streamSync, config, entry->kernels}};
  std::string note;
  if (entry->streamSync) {
    const TunedKernels& best = *entry->streamSync;
    const bool same = best.config == entry->kernels.config && best.producerParts == entry->kernels.producerParts &&
                      best.consumerParts == entry->kernels.consumerParts && best.order == entry->kernels.order &&
                      best.pairedGateUp == entry->kernels.pairedGateUp &&
                      best.swiGluColumns == entry->kernels.swiGluColumns;
    if (const TileConfig* bestConfig = configNamed(configs, best.config); !same && bestConfig)
      runs.push_back({streamSync, bestConfig, best});
    else if (!same)
      note = "; StreamSync's best configuration " + best.config + " is not in this build";
  }
  runs.push_back({*variant, config, entry->kernels});
  std::printf("%s: M=%d: tuned entry for M=%d (%s, from %s): %s on %s, split %ux%u, order %s%s\n", program.c_str(), m,
              entry->m, table.path.c_str(), entry->source.empty() ? "no source" : entry->source.c_str(),
              entry->variant.c_str(), entry->kernels.config.c_str(), entry->kernels.producerParts,
              entry->kernels.consumerParts, entry->kernels.order.c_str(), note.c_str());
  return runs;
}

}  // namespace cusync::examples
