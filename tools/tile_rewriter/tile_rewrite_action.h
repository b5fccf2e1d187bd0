// The Clang frontend action of the rewriter: installs the `#pragma tile` handler before parsing, then on the
// finished AST matches pragmas to statements, plans the reordering, reports what it cannot move and renders the
// rewritten main file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "clang/Tooling/Tooling.h"

#include "rewriter_options.h"
#include "source_rewriting.h"

namespace cusync::tile_rewriter {

struct RewriteResult {
  bool parsed = false;       // the translation unit parsed without errors and was analyzed
  bool changed = false;      // at least one load moved
  unsigned warnings = 0;     // warnings the rewriter itself reported
  std::string output;        // the rewritten main file (the input, byte for byte, when nothing moved)
  std::vector<std::string> dependencies;  // every file the parse read, for build systems
};

std::unique_ptr<clang::tooling::FrontendActionFactory> makeTileRewriteActionFactory(
    const RewriterOptions& options, const LineDirectiveOptions& lines, RewriteResult& result);

}  // namespace cusync::tile_rewriter
