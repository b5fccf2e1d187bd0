// The Clang frontend action of the rewriter: installs the `#pragma tile` handler before parsing, then on the
// finished AST matches pragmas to statements, plans the reordering, reports what it cannot move and renders the
// rewritten main file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "clang/Tooling/Tooling.h"

#include "parse_errors.h"
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

// Which parse errors still allow a rewrite: none, or (ignoreHeaderErrors) only non-fatal ones outside the main file.
struct ParseErrorPolicy {
  const ParseErrorCounter* errors = nullptr;
  bool ignoreHeaderErrors = false;
  bool allowsRewrite() const {
    return errors->mainFileErrors() == 0 && (ignoreHeaderErrors || errors->headerErrors() == 0);
  }
};

std::unique_ptr<clang::tooling::FrontendActionFactory> makeTileRewriteActionFactory(
    const RewriterOptions& options, const LineDirectiveOptions& lines, const ParseErrorPolicy& errors,
    RewriteResult& result);

}  // namespace cusync::tile_rewriter
