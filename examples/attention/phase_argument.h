// The --phase option's value, one parser for attention_example and bench/attention/gemm_shape_probe: "decode" (token
// generation) or "prompt" (prompt processing); anything else is a usage error (exit 2) naming the option and the
// value. Host code.
#pragma once

#include <string>

#include "attention_policies.h"
#include "common/command_line_numbers.h"

namespace cusync::examples::attention {

inline Phase phaseArgument(const std::string& program, const std::string& option, const std::string& text) {
  if (text == "decode") return Phase::Decode;
  if (text != "prompt") exitWithUsageError(program, option + ": '" + text + "' is neither decode nor prompt");
  return Phase::Prompt;
}

}  // namespace cusync::examples::attention
