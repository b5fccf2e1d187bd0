#include "parse_errors.h"

#include "clang/Basic/SourceManager.h"
#include "llvm/Support/raw_ostream.h"

namespace cusync::tile_rewriter {

ParseErrorCounter::ParseErrorCounter() : options_(new clang::DiagnosticOptions()), printer_(llvm::errs(), options_.get()) {}

void ParseErrorCounter::BeginSourceFile(const clang::LangOptions& language, const clang::Preprocessor* preprocessor) {
  printer_.BeginSourceFile(language, preprocessor);
}

void ParseErrorCounter::EndSourceFile() { printer_.EndSourceFile(); }

void ParseErrorCounter::HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) {
  clang::DiagnosticConsumer::HandleDiagnostic(level, info);
  printer_.HandleDiagnostic(level, info);
  if (level < clang::DiagnosticsEngine::Error) return;
  bool inHeader = false;
  if (level == clang::DiagnosticsEngine::Error && info.hasSourceManager() && info.getLocation().isValid()) {
    const clang::SourceManager& sources = info.getSourceManager();
    inHeader = !sources.isInMainFile(sources.getExpansionLoc(info.getLocation()));
  }
  ++(inHeader ? headerErrors_ : mainFileErrors_);
}

}  // namespace cusync::tile_rewriter
