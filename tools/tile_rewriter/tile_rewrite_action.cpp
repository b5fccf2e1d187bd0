#include "tile_rewrite_action.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Lex/Preprocessor.h"

#include "access_analysis.h"
#include "annotated_statements.h"
#include "load_reordering.h"
#include "tile_pragma.h"

namespace cusync::tile_rewriter {
namespace {

const char* describe(PragmaProblem::Kind kind) {
  switch (kind) {
    case PragmaProblem::Kind::NothingFollows:
      return "#pragma tile is not followed by a statement in its block; it annotates nothing";
    case PragmaProblem::Kind::OutsideFunction:
      return "#pragma tile must precede a statement inside a function body; it annotates nothing";
    case PragmaProblem::Kind::FromMacro:
      return "#pragma tile produced by a macro expansion (_Pragma) is not supported; it annotates nothing";
  }
  return "";
}

class TileRewriteConsumer : public clang::ASTConsumer {
public:
  TileRewriteConsumer(clang::CompilerInstance& compiler, const std::vector<TilePragma>& pragmas,
                      const RewriterOptions& options, const LineDirectiveOptions& lines, const ParseErrorPolicy& errors,
                      RewriteResult& result)
      : compiler_(compiler), pragmas_(pragmas), options_(options), lines_(lines), errors_(errors), result_(result) {}

  void HandleTranslationUnit(clang::ASTContext& context) override {
    clang::DiagnosticsEngine& diagnostics = compiler_.getDiagnostics();
    if (!errors_.allowsRewrite()) return;  // reported by the caller: nothing is written for a broken file
    clang::SourceManager& sources = context.getSourceManager();
    const unsigned warningId = diagnostics.getCustomDiagID(clang::DiagnosticsEngine::Warning, "%0");
    const unsigned noteId = diagnostics.getCustomDiagID(clang::DiagnosticsEngine::Note, "%0");

    AnnotationScan scan = findAnnotatedStatements(context, pragmas_);
    for (const PragmaProblem& problem : scan.problems) {
      diagnostics.Report(problem.where, warningId) << describe(problem.kind);
      ++result_.warnings;
    }
    AccessAnalyzer analyzer(context, options_);
    ReorderPlan plan = planReordering(scan.groups, analyzer, sources);
    for (const ReorderFinding& finding : plan.findings) {
      diagnostics.Report(finding.where, warningId) << finding.message;
      if (finding.noteWhere.isValid()) diagnostics.Report(finding.noteWhere, noteId) << finding.note;
      ++result_.warnings;
    }
    result_.output = rewriteMainFile(sources, context.getLangOpts(), plan.reorderings, lines_);
    result_.changed = !plan.reorderings.empty();
    for (auto entry = sources.fileinfo_begin(); entry != sources.fileinfo_end(); ++entry)
      result_.dependencies.push_back(entry->first.getName().str());
    result_.parsed = true;
  }

private:
  clang::CompilerInstance& compiler_;
  const std::vector<TilePragma>& pragmas_;
  const RewriterOptions& options_;
  const LineDirectiveOptions& lines_;
  const ParseErrorPolicy& errors_;
  RewriteResult& result_;
};

class TileRewriteAction : public clang::ASTFrontendAction {
public:
  TileRewriteAction(const RewriterOptions& options, const LineDirectiveOptions& lines, const ParseErrorPolicy& errors,
                    RewriteResult& result)
      : options_(options), lines_(lines), errors_(errors), result_(result) {}

  bool BeginSourceFileAction(clang::CompilerInstance& compiler) override {
    compiler.getPreprocessor().AddPragmaHandler(new TilePragmaHandler(pragmas_));
    return true;
  }

  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& compiler, llvm::StringRef) override {
    return std::make_unique<TileRewriteConsumer>(compiler, pragmas_, options_, lines_, errors_, result_);
  }

private:
  const RewriterOptions& options_;
  const LineDirectiveOptions& lines_;
  const ParseErrorPolicy& errors_;
  RewriteResult& result_;
  std::vector<TilePragma> pragmas_;
};

class TileRewriteActionFactory : public clang::tooling::FrontendActionFactory {
public:
  TileRewriteActionFactory(const RewriterOptions& options, const LineDirectiveOptions& lines,
                           const ParseErrorPolicy& errors, RewriteResult& result)
      : options_(options), lines_(lines), errors_(errors), result_(result) {}
  std::unique_ptr<clang::FrontendAction> create() override {
    return std::make_unique<TileRewriteAction>(options_, lines_, errors_, result_);
  }

private:
  const RewriterOptions& options_;
  const LineDirectiveOptions& lines_;
  const ParseErrorPolicy& errors_;
  RewriteResult& result_;
};

}  // namespace

std::unique_ptr<clang::tooling::FrontendActionFactory> makeTileRewriteActionFactory(
    const RewriterOptions& options, const LineDirectiveOptions& lines, const ParseErrorPolicy& errors,
    RewriteResult& result) {
  return std::make_unique<TileRewriteActionFactory>(options, lines, errors, result);
}

}  // namespace cusync::tile_rewriter
