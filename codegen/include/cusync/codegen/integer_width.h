// Integer width: what is proven is what runs only if the emitted arithmetic does not wrap.
//
// Every generated function computes in std::uint32_t: its inputs are TileCoord and GridShape fields, its constants
// are `u` literals, its result is std::uint32_t, and C++ keeps unsigned int arithmetic in 32 bits (mod 2^32). The
// prover reasons in unbounded integers. The two agree exactly when every value the C++ expression computes,
// intermediate ones included, lies in [0, 2^32): then no addition or product wraps, no subtraction goes below zero,
// and unsigned / and % are floor division and modulo (their operands are non-negative). This check proves that for
// every tile of the grid and every admissible parameter value:
//   - a subexpression that is quasi-affine in the tile and the symbolic parameters is bounded exactly by isl
//     (its minimum and maximum over the grid's tiles, for all parameter values the constraints allow);
//   - any other (a product of two symbolic quantities) is bounded by interval arithmetic over its operands'
//     bounds, which over-approximates: a failure there says "may", with the operands' bounds.
// Host-only header.
#pragma once

#include <cusync/analysis/isl_model.h>
#include <cusync/codegen/index_expression.h>

#include <cstdint>
#include <string>

namespace cusync::codegen {

// The type every emitted function computes in.
inline constexpr std::int64_t kEmittedTypeMax = 4294967295;  // std::uint32_t
inline constexpr const char* kEmittedTypeName = "std::uint32_t";

struct WidthProof {
  bool fits = true;
  std::string failure;         // which subexpression leaves [0, 2^32), and its bounds
  std::string counterexample;  // a tile and parameter values where it does (exact bounds only)
};

// Proves that `e`, evaluated as C++ on the tiles of `grid` of `model` (the model with symbolic parameters free, so
// the proof holds for every admissible value), computes every value in [0, kEmittedTypeMax]. `function` names
// `e` in the failure ("sem", "index").
WidthProof proveFitsEmittedType(const analysis::IslModel& model, const std::string& grid, const IndexExpression& e,
                                const std::string& function);

}  // namespace cusync::codegen
