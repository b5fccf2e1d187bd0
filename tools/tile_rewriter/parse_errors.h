// Prints Clang's diagnostics and tells errors in the rewritten (main) file from errors in the headers it includes.
// Warnings located in included files (CUTLASS's, the toolkit's) are not the rewriter user's to fix and are not shown,
// with their notes; errors anywhere and everything about the main file are.
//
// nvcc accepts a few constructs that Clang rejects (a lone `%` in inline PTX, an initialized `__shared__` object);
// when they sit in an included header, --ignore-errors-in-headers lets the rewrite go on: only the main file is
// rewritten, and a call into a function Clang could not fully parse counts as a barrier. Errors in the main file,
// and fatal errors anywhere, always stop the rewrite.
#pragma once

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"

namespace cusync::tile_rewriter {

class ParseErrorCounter : public clang::DiagnosticConsumer {
public:
  ParseErrorCounter();

  void BeginSourceFile(const clang::LangOptions& language, const clang::Preprocessor* preprocessor) override;
  void EndSourceFile() override;
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override;

  unsigned mainFileErrors() const { return mainFileErrors_; }
  unsigned headerErrors() const { return headerErrors_; }

private:
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> options_;
  clang::TextDiagnosticPrinter printer_;
  unsigned mainFileErrors_ = 0;
  unsigned headerErrors_ = 0;
  bool hidingNotes_ = false;  // the last warning was hidden: hide the notes that belong to it
};

}  // namespace cusync::tile_rewriter
