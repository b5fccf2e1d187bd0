// conv2d_chain_example's command line: which models, layers, batches, tile configurations and variants to run.
// Parsed before any CUDA call, so that a bad command line is exit 2 (and --help exit 0) on a machine without a GPU
// too. Host header, no CUDA.
#pragma once

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/command_line_numbers.h"
#include "conv_models.h"
#include "conv_split.h"
#include "conv_variants.h"

namespace cusync::examples {

inline constexpr const char* kConvProgram = "conv2d_chain_example";

struct ConvOptions {
  std::vector<int> batches = {1, 2, 4, 8, 16, 32};
  std::vector<ConvChainSpec> chains;  // the selected layers of the selected models, in that order
  std::vector<std::string> configs;   // empty: every configuration built
  std::vector<ConvVariant> variants = {ConvVariant::StreamSync,  ConvVariant::TileSync,   ConvVariant::RowSync,
                                       ConvVariant::TileSyncPdl, ConvVariant::RowSyncPdl, ConvVariant::TileSyncW,
                                       ConvVariant::RowSyncW,    ConvVariant::CutlassStock,
                                       ConvVariant::CutlassStockPdl};
  // Split-K targets tried per configuration (conv_split.h); the hooked variants only (CUTLASS-stock: none).
  std::vector<ConvSplitTarget> splits = {ConvSplitTarget::None, ConvSplitTarget::HalfWave, ConvSplitTarget::OneWave};
  // Tile orders tried per configuration (the hooked variants; CUTLASS-stock has its own): hardware order (the
  // paper's T: a block computes the tile its blockIdx names) and tickets (cusync's own order, drawn before the
  // block's first load). Configuration suffix "_ticket" for the latter.
  std::vector<bool> hardwareOrders = {true};
  // How a split tile's last part gets the others' partials: read back one by one (false, deterministic) or summed
  // in L2 by every part (true; split_k_reduction.hpp's SplitKBuffers::accumulate, not bitwise reproducible).
  std::vector<bool> splitSums = {false, true};
  bool checkOnly = false;
  // Time a layer and batch's chains together, in interleaved rounds (conv_main.cu's timeInterleaved), not one after
  // another.
  bool interleave = false;
  bool measureCeilings = true;  // the GEMM rate and read bandwidth the floor is computed from (timing runs only)
  int repetitions = 10, samples = 10;
  int warmupMilliseconds = 0;  // sustained warm-up before each timing (graph_timer.cuh): steady power state
  long long seed = 1;
  std::string csv;
};

inline void printConvUsage() {
  std::printf(
      "Usage: %s [options]\n"
      "Chains of dependent convolutions (the cuSync paper's Table II layers and ResNet's bottleneck and stride-2\n"
      "blocks) on hooked CUTLASS sm90 implicit-GEMM convolutions: stream-ordered and tile-synchronized, every stage\n"
      "checked against a direct convolution, then timed with CUDA graphs; a table last.\n"
      "\n"
      "  --model LIST       resnet (2 3x3 per layer), vgg (2 at 56 and 28, 4 at 14 and 7), bottleneck (1x1, 3x3,\n"
      "                     1x1), stride2 (3x3, then 3x3/2 and 1x1/2 reading it, then 3x3); default resnet,vgg\n"
      "  --layers LIST      output widths of the layers to run: 56 (64 channels), 28 (128), 14 (256), 7 (512);\n"
      "                     default every layer of each model\n"
      "  --batch LIST       batch sizes, 1 to 32 (default 1,2,4,8,16,32)\n"
      "  --configs LIST     tile configurations, e.g. 64x64x64_s4_b1 (default: every one built; the table\n"
      "                     reports each variant's best)\n"
      "  --variants LIST    StreamSync,TileSync,RowSync,TileSync-PDL,RowSync-PDL,TileSync-W,RowSync-W,\n"
      "                     CUTLASS-stock,CUTLASS-stock-PDL (default all; -W: no wait-kernels, only where every\n"
      "                     block of the chain fits in one wave, else reported n/a; CUTLASS-stock: CUTLASS's own\n"
      "                     sm90 convolution of the same configuration, stages back to back on one stream, -PDL\n"
      "                     with its PDL)\n"
      "  --splits LIST      split-K targets of the hooked variants: none, half, wave, 2waves (each stage split\n"
      "                     into the most parts whose work units fit in that many waves, at least 4 k-blocks a\n"
      "                     part; a target that splits nothing, or as another did, is not run again); a split\n"
      "                     chain is its own configuration, e.g. 64x64x64_s4_b1_k8+8 (default none,half,wave)\n"
      "  --split-reduce LIST  read and/or sum: how a split tile's last part gets the other parts' partials, read\n"
      "                     back one by one (deterministic) or summed in L2 by every part (one read whatever the\n"
      "                     parts; not bitwise reproducible; configuration suffix _sum); default both (summing\n"
      "                     wins at 9-18 parts, reading back at 2-4: docs/BENCHMARKS.md, issue 13, session 17)\n"
      "  --tile-orders LIST hardware (the paper's T, default) and/or ticket (cusync's tile counter; configuration\n"
      "                     suffix _ticket) for the hooked variants\n"
      "  --check-only       check every variant, time nothing\n"
      "  --no-ceilings      do not measure the GEMM rate and read bandwidth (the floor is then 0)\n"
      "  --repetitions N    chains per CUDA graph (default 10)\n"
      "  --samples N        graph replays timed, median reported (default 10)\n"
      "  --warmup-ms N      replay each variant for N ms before timing it: the power state of sustained work\n"
      "                     instead of a burst after idle time (default 0)\n"
      "  --interleave       per layer and batch: check every chain (configuration and variant) as it is made, then\n"
      "                     time them all together, in --samples rounds that replay each chain's graph once in an\n"
      "                     order rotated per round, after one --warmup-ms warm-up over all of them; then check each\n"
      "                     again after a replay of its own graph. Timed one after another, each chain meets the\n"
      "                     clocks the previous ones left. Keeps the problem's chains in memory until then; its CSV\n"
      "                     rows come after its timing. Nothing to time with --check-only\n"
      "  --seed N           seed of the random inputs (default 1)\n"
      "  --csv PATH         write one row per chain, configuration and variant\n"
      "  --help             print this help\n"
      "\n"
      "Exit status: 0 all checks passed, 1 a check failed, 2 bad command line, 77 no sm_90 GPU.\n",
      kConvProgram);
}

inline ConvOptions parseConvOptions(int argc, char** argv) {
  const std::string program = kConvProgram;
  ConvOptions options;
  std::vector<std::string> models = {"resnet", "vgg"};
  std::vector<int> widths;  // empty: all
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) exitWithUsageError(program, arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      printConvUsage();
      std::exit(0);
    } else if (arg == "--model" || arg == "--models") {
      models = wordListArgument(program, arg, value());
      for (const std::string& model : models)
        if (convModelLayers(model).empty())
          exitWithUsageError(program, arg + ": unknown model '" + model + "' (resnet, vgg, bottleneck, stride2)");
    } else if (arg == "--layers") {
      widths = positiveIntListArgument(program, arg, value());
    } else if (arg == "--batch") {
      options.batches = positiveIntListArgument(program, arg, value());
      for (int b : options.batches)
        if (b > 32) exitWithUsageError(program, "--batch: " + std::to_string(b) + " is above 32 (the specs' bound)");
    } else if (arg == "--configs") {
      options.configs = wordListArgument(program, arg, value());
    } else if (arg == "--variants") {
      options.variants.clear();
      for (const std::string& word : wordListArgument(program, arg, value())) {
        bool found = false;
        for (const auto& [variant, name] : convVariantNames())
          if (name == word) options.variants.push_back(variant), found = true;
        if (!found) exitWithUsageError(program, "--variants: unknown variant '" + word + "'");
      }
    } else if (arg == "--splits" || arg == "--split") {
      options.splits.clear();
      for (const std::string& word : wordListArgument(program, arg, value())) {
        bool found = false;
        for (const auto& [target, name] : convSplitTargetNames())
          if (name == word) options.splits.push_back(target), found = true;
        if (!found) exitWithUsageError(program, arg + ": unknown split target '" + word + "' (none, half, wave, 2waves)");
      }
    } else if (arg == "--split-reduce") {
      // The flag is "summed"; the message lists read first, as the help does.
      options.splitSums.clear();
      for (const bool read : twoWordListArgument(program, arg, value(), "split reduction", "read", "sum"))
        options.splitSums.push_back(!read);
    } else if (arg == "--tile-orders") {
      options.hardwareOrders = twoWordListArgument(program, arg, value(), "tile order", "hardware", "ticket");
    } else if (arg == "--check-only") {
      options.checkOnly = true;
    } else if (arg == "--interleave") {
      options.interleave = true;
    } else if (arg == "--no-ceilings") {
      options.measureCeilings = false;
    } else if (arg == "--repetitions") {
      options.repetitions = positiveIntArgument(program, arg, value());
    } else if (arg == "--samples") {
      options.samples = positiveIntArgument(program, arg, value());
    } else if (arg == "--warmup-ms") {
      options.warmupMilliseconds = warmupMillisecondsArgument(program, arg, value());
    } else if (arg == "--seed") {
      options.seed = integerArgument(program, arg, value(), 0, LLONG_MAX);
    } else if (arg == "--csv") {
      options.csv = value();
    } else {
      exitWithUsageError(program, "unknown argument '" + arg + "'");
    }
  }
  if (!options.csv.empty()) requireWritableOutput(program, "--csv", options.csv);
  // Every width asked for must be a layer of some model asked for; a model may lack one (stride2 has no 56).
  for (int width : widths) {
    bool found = false;
    for (const std::string& model : models)
      for (const ConvChainSpec& chain : convModelLayers(model)) found = found || chain.width == width;
    if (!found) exitWithUsageError(program, "--layers: no layer of width " + std::to_string(width));
  }
  for (const std::string& model : models)
    for (const ConvChainSpec& chain : convModelLayers(model))
      for (int width : widths.empty() ? std::vector<int>{chain.width} : widths)
        if (chain.width == width) options.chains.push_back(chain);
  return options;
}

}  // namespace cusync::examples
