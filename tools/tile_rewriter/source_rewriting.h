// Turns a reordering plan into the rewritten main file, with clang::Rewriter.
//
// Chunks are whole lines, so a reordering never changes the number of lines: every line keeps its text, only the
// order of lines inside a group changes. With `#line` directives, each moved chunk is preceded by the line number
// it had in the original and the group is followed by the number of the next original line, so compiler errors
// and debuggers point at the original source; the file starts with `#line 1 "<original>"` so that the unchanged
// parts name the original file too. A file where nothing moves is returned byte for byte.
#pragma once

#include <string>
#include <vector>

#include "clang/Basic/LangOptions.h"
#include "clang/Basic/SourceManager.h"

#include "load_reordering.h"

namespace cusync::tile_rewriter {

struct LineDirectiveOptions {
  bool enabled = false;
  std::string originalPath;  // the name the directives give, as written in the output
};

std::string rewriteMainFile(clang::SourceManager& sources, const clang::LangOptions& language,
                            const std::vector<Reordering>& reorderings, const LineDirectiveOptions& lines);

}  // namespace cusync::tile_rewriter
