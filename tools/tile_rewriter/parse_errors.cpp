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
  bool inHeader = false;
  if (info.hasSourceManager() && info.getLocation().isValid()) {
    const clang::SourceManager& sources = info.getSourceManager();
    inHeader = !sources.isInMainFile(sources.getExpansionLoc(info.getLocation()));
  }
  if (level == clang::DiagnosticsEngine::Note) {
    if (!hidingNotes_) printer_.HandleDiagnostic(level, info);
    return;
  }
  hidingNotes_ = level == clang::DiagnosticsEngine::Warning && inHeader;
  if (!hidingNotes_) printer_.HandleDiagnostic(level, info);
  if (level < clang::DiagnosticsEngine::Error) return;
  ++(inHeader && level == clang::DiagnosticsEngine::Error ? headerErrors_ : mainFileErrors_);
}

}  // namespace cusync::tile_rewriter
