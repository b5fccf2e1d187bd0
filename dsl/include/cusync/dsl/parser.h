// The `.dep` front end: spec text -> spec IR.
//
// A .dep file is a sequence of declarations in the notation of the cuSync paper's Figure 5, and is also valid C++
// against the embedded DSL (cusync/dsl/dsl.h), which records the identical IR:
//
//   Param H = 12288, TileN = 128;        // concrete parameters: default values, overridable with -D NAME=VALUE
//   Symbolic M = 1024;                   // symbolic: checked for every value satisfying its constraints
//   Where(M >= 128, M <= 8192);          // constraints of symbolic parameters
//   Dim x, y;                            // dimension variables, shared by all grids
//   Grid g1(x, y, H/(8*TileN), M/128);   // 1 to 3 dims, then one extent per dim (x first)
//   Tile prod(x, y);                     // a tile: one affine coordinate per grid dim
//   ForAll row(prod, x, Range(g1.x));    // the tiles obtained by letting x range over [0, g1.x)
//   Dep dep({g2, Tile(x, y)}, {g1, row});  // consumer tile of g2 reads every tile of `row` in g1
//
// What the parser checks: syntax, and names (unknown or redeclared names, using a name as the wrong kind of thing)
// -- everything a C++ compiler would reject in the same text. Everything about meaning (tile coordinate counts,
// affinity, extents, division by zero, bounds) is checked on the IR by the analysis, so both front ends get the same
// checks. Integer subexpressions without names are folded as C++ folds them (truncating / and %), because in the
// embedded DSL the C++ compiler folds them before the DSL sees them.
#pragma once

#include <cusync/dsl/diagnostic.h>
#include <cusync/dsl/spec.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cusync::dsl {

// Larger spec files are rejected before lexing: a real spec is a few hundred bytes.
inline constexpr std::size_t kMaxSpecFileBytes = 1 << 20;

// Parses spec text. `file` names the text in locations; the spec's name is the file's stem.
// Returns std::nullopt when there are errors (all reported to `diagnostics`).
std::optional<spec::Spec> parseSpec(std::string_view text, std::string_view file, Diagnostics& diagnostics);

// Reads and parses a spec file; the text is added to `sources` for caret lines. Unreadable or oversized files are
// errors like any other.
std::optional<spec::Spec> parseSpecFile(const std::string& path, SourceTexts& sources, Diagnostics& diagnostics);

// The spec name for a file path: its stem ("examples/mlp/gpt3_mlp.dep" -> "gpt3_mlp").
std::string specNameFromPath(std::string_view path);

}  // namespace cusync::dsl
