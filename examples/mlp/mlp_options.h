// Command-line options shared by the MLP examples (GPT-3: mlp_example, LLaMA: mlp_llama_example). Host header.
//
// Common usage: [--m 1,8,...] [--pairs N] [--samples N] [--csv FILE] [--check-only] [--configs a,b]
//               [--variants a,b] [--orders row,g8,...] [--streamk] [--baselines-only] [--verbose]
// A program may accept more arguments through `extraArgument` (it is asked first about every unknown argument).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace cusync::examples {

struct MlpOptions {
  std::string program;  // for messages, e.g. mlp_example
  std::vector<int> ms{1, 8, 64, 128, 256, 512, 1024, 2048, 4096};
  int pairsPerGraph = 10;
  int samples = 9;
  std::string csvPath;
  bool checkOnly = false;
  bool verbose = false;
  bool streamK = false;
  bool baselinesOnly = false;
  std::vector<std::string> configs;  // tile configurations to try (empty: all registered)
  std::vector<std::string> variants;  // variants to run (empty: all)
  std::vector<std::string> orders{"row", "g8"};  // tile orders to try (see tile_orders.h)
};

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

inline MlpOptions parseMlpOptions(int argc, char** argv, const std::string& program, const std::string& defaultCsv,
                                  const ExtraArgument& extraArgument = {}) {
  MlpOptions options;
  options.program = program;
  options.csvPath = defaultCsv;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const ArgumentValue value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n", program.c_str(), arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (extraArgument && extraArgument(arg, value)) continue;
    if (arg == "--m") {
      options.ms.clear();
      for (auto& m : splitList(value())) options.ms.push_back(std::stoi(m));
    } else if (arg == "--pairs") {
      options.pairsPerGraph = std::stoi(value());
    } else if (arg == "--samples") {
      options.samples = std::stoi(value());
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
    } else if (arg == "--orders") {
      options.orders = splitList(value());
    } else if (arg == "--configs") {
      options.configs = splitList(value());
    } else {
      std::fprintf(stderr, "%s: unknown argument '%s'\n", program.c_str(), arg.c_str());
      std::exit(2);
    }
  }
  return options;
}

}  // namespace cusync::examples
