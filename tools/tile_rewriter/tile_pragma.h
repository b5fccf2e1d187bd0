// `#pragma tile`: the annotation a user puts before a tile-load statement. A real Clang PragmaHandler records where
// each one appears; matching a pragma to the statement that follows it happens later, on the AST
// (annotated_statements.h), because the preprocessor does not know statements.
#pragma once

#include <vector>

#include "clang/Basic/SourceLocation.h"
#include "clang/Lex/Pragma.h"

namespace cusync::tile_rewriter {

struct TilePragma {
  clang::SourceLocation location;  // the `#` of `#pragma tile` (or the `_Pragma` token)
  clang::SourceLocation end;       // end of the directive: the statement it annotates starts after this
  bool fromMacro = false;          // written as _Pragma("tile") inside a macro expansion
};

class TilePragmaHandler : public clang::PragmaHandler {
public:
  explicit TilePragmaHandler(std::vector<TilePragma>& pragmas) : clang::PragmaHandler("tile"), pragmas_(pragmas) {}

  void HandlePragma(clang::Preprocessor& preprocessor, clang::PragmaIntroducer introducer,
                    clang::Token& pragmaName) override;

private:
  std::vector<TilePragma>& pragmas_;
};

}  // namespace cusync::tile_rewriter
