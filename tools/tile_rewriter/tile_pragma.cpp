#include "tile_pragma.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Lex/Preprocessor.h"

namespace cusync::tile_rewriter {

void TilePragmaHandler::HandlePragma(clang::Preprocessor& preprocessor, clang::PragmaIntroducer introducer,
                                     clang::Token& pragmaName) {
  // `#pragma tile` takes no arguments. Anything after `tile` is most likely a typo for another pragma, so say so
  // rather than silently treating the line as an annotation.
  clang::Token token;
  preprocessor.LexUnexpandedToken(token);
  if (token.isNot(clang::tok::eod)) {
    auto& diagnostics = preprocessor.getDiagnostics();
    unsigned id = diagnostics.getCustomDiagID(clang::DiagnosticsEngine::Warning,
                                              "#pragma tile takes no arguments; the extra tokens are ignored");
    diagnostics.Report(token.getLocation(), id);
    while (token.isNot(clang::tok::eod)) preprocessor.LexUnexpandedToken(token);
  }
  TilePragma pragma;
  pragma.location = introducer.Loc;
  pragma.end = token.getLocation();
  pragma.fromMacro = introducer.Loc.isMacroID() || introducer.Kind != clang::PIK_HashPragma;
  (void)pragmaName;
  pragmas_.push_back(pragma);
}

}  // namespace cusync::tile_rewriter
