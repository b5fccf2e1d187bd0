#include "annotated_statements.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

namespace cusync::tile_rewriter {
namespace {

bool isHorizontalSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// From `offset`, skips spaces and comments to the end of the line; returns the offset after the newline, or
// nothing when other code follows on the line.
std::optional<unsigned> endOfLineAfter(llvm::StringRef text, unsigned offset) {
  unsigned i = offset;
  while (i < text.size()) {
    if (text[i] == '\n') return i + 1;
    if (isHorizontalSpace(text[i])) {
      ++i;
    } else if (text.substr(i).starts_with("//")) {
      size_t newline = text.find('\n', i);
      return newline == llvm::StringRef::npos ? unsigned(text.size()) : unsigned(newline + 1);
    } else if (text.substr(i).starts_with("/*")) {
      size_t close = text.find("*/", i + 2);
      if (close == llvm::StringRef::npos) return std::nullopt;
      i = unsigned(close + 2);
    } else {
      return std::nullopt;
    }
  }
  return unsigned(text.size());
}

// Offset of the first character after `offset` that is not a space or inside a comment.
unsigned skipSpaceAndComments(llvm::StringRef text, unsigned offset) {
  unsigned i = offset;
  while (i < text.size()) {
    if (isHorizontalSpace(text[i]) || text[i] == '\n') {
      ++i;
    } else if (text.substr(i).starts_with("//")) {
      size_t newline = text.find('\n', i);
      i = newline == llvm::StringRef::npos ? unsigned(text.size()) : unsigned(newline);
    } else if (text.substr(i).starts_with("/*")) {
      size_t close = text.find("*/", i + 2);
      i = close == llvm::StringRef::npos ? unsigned(text.size()) : unsigned(close + 2);
    } else {
      break;
    }
  }
  return i;
}

// Why the text in [begin, end) cannot travel with the statement after it; empty when it holds only spaces,
// comments and #pragma lines (`#pragma unroll` before an annotated loop moves with the loop).
std::string leadingTextProblem(llvm::StringRef text, unsigned begin, unsigned end) {
  unsigned i = begin;
  bool atLineStart = true;
  while (i < end) {
    const char c = text[i];
    if (c == '\n') {
      atLineStart = true;
      ++i;
    } else if (isHorizontalSpace(c)) {
      ++i;
    } else if (text.substr(i).starts_with("//")) {
      size_t newline = text.find('\n', i);
      i = newline == llvm::StringRef::npos ? end : unsigned(newline);
    } else if (text.substr(i).starts_with("/*")) {
      size_t close = text.find("*/", i + 2);
      if (close == llvm::StringRef::npos || close + 2 > end) return "a comment runs into it";
      i = unsigned(close + 2);
    } else if (c == '#' && atLineStart) {
      unsigned nameBegin = i + 1;
      while (nameBegin < end && isHorizontalSpace(text[nameBegin])) ++nameBegin;
      unsigned nameEnd = nameBegin;
      while (nameEnd < end && std::isalpha(static_cast<unsigned char>(text[nameEnd]))) ++nameEnd;
      llvm::StringRef directive = text.slice(nameBegin, nameEnd);
      if (directive != "pragma") return "a '#" + directive.str() + "' directive precedes it";
      // Skip the directive, honouring backslash-newline continuations.
      while (i < end && text[i] != '\n') {
        if (text[i] == '\\' && i + 1 < end && text[i + 1] == '\n') ++i;
        ++i;
      }
    } else {
      return "other code shares a line with it";
    }
  }
  return "";
}

// Statements whose text ends before a ';' that belongs to them.
bool needsSemicolon(const clang::Stmt* statement) {
  using namespace clang;
  if (isa<Expr, DoStmt, ReturnStmt, BreakStmt, ContinueStmt, GotoStmt, IndirectGotoStmt, AsmStmt>(statement))
    return true;
  if (const auto* ifStatement = dyn_cast<IfStmt>(statement))
    return needsSemicolon(ifStatement->getElse() ? ifStatement->getElse() : ifStatement->getThen());
  if (const auto* loop = dyn_cast<ForStmt>(statement)) return needsSemicolon(loop->getBody());
  if (const auto* loop = dyn_cast<WhileStmt>(statement)) return needsSemicolon(loop->getBody());
  if (const auto* loop = dyn_cast<CXXForRangeStmt>(statement)) return needsSemicolon(loop->getBody());
  if (const auto* choice = dyn_cast<SwitchStmt>(statement)) return needsSemicolon(choice->getBody());
  if (const auto* label = dyn_cast<LabelStmt>(statement)) return needsSemicolon(label->getSubStmt());
  if (const auto* attributed = dyn_cast<AttributedStmt>(statement))
    return needsSemicolon(attributed->getSubStmt());
  return false;
}

struct StatementText {
  unsigned begin = 0;
  unsigned end = 0;     // after the statement's last character, its ';' included
  std::string problem;  // non-empty when the statement is not a contiguous piece of the main file
};

StatementText statementText(const clang::Stmt* statement, const clang::SourceManager& sources,
                            const clang::LangOptions& language) {
  using namespace clang;
  StatementText result;
  CharSourceRange range = Lexer::makeFileCharRange(CharSourceRange::getTokenRange(statement->getSourceRange()),
                                                   sources, language);
  if (range.isInvalid() || !sources.isWrittenInMainFile(range.getBegin()) ||
      !sources.isWrittenInMainFile(range.getEnd())) {
    result.problem = "it comes from a macro expansion that also produces other code";
    return result;
  }
  result.begin = sources.getFileOffset(range.getBegin());
  result.end = sources.getFileOffset(range.getEnd());
  if (needsSemicolon(statement)) {
    llvm::StringRef text = sources.getBufferData(sources.getMainFileID());
    unsigned next = skipSpaceAndComments(text, result.end);
    if (next < text.size() && text[next] == ';') result.end = next + 1;
    else if (!statement->getEndLoc().isMacroID()) result.problem = "its terminating ';' was not found";
  }
  return result;
}

class CompoundStatements : public clang::RecursiveASTVisitor<CompoundStatements> {
public:
  bool VisitCompoundStmt(clang::CompoundStmt* block) {
    blocks.push_back(block);
    return true;
  }
  std::vector<const clang::CompoundStmt*> blocks;
};

struct PendingPragma {
  unsigned offset;
  const TilePragma* pragma;
  bool matched = false;
};

}  // namespace

AnnotationScan findAnnotatedStatements(clang::ASTContext& context, const std::vector<TilePragma>& pragmas) {
  using namespace clang;
  const SourceManager& sources = context.getSourceManager();
  const LangOptions& language = context.getLangOpts();
  const llvm::StringRef text = sources.getBufferData(sources.getMainFileID());
  AnnotationScan scan;

  std::vector<PendingPragma> pending;
  for (const TilePragma& pragma : pragmas) {
    if (!sources.isWrittenInMainFile(sources.getExpansionLoc(pragma.location))) continue;
    if (pragma.fromMacro) {
      scan.problems.push_back({PragmaProblem::Kind::FromMacro, pragma.location});
      continue;
    }
    ++scan.mainFilePragmas;
    pending.push_back({sources.getFileOffset(pragma.location), &pragma});
  }
  std::sort(pending.begin(), pending.end(),
            [](const PendingPragma& a, const PendingPragma& b) { return a.offset < b.offset; });

  CompoundStatements visitor;
  visitor.TraverseDecl(context.getTranslationUnitDecl());
  std::vector<std::pair<unsigned, unsigned>> blockRanges;
  for (const CompoundStmt* block : visitor.blocks) {
    if (block->getLBracLoc().isMacroID() || block->getRBracLoc().isMacroID() ||
        !sources.isWrittenInMainFile(block->getLBracLoc()))
      continue;
    const unsigned open = sources.getFileOffset(block->getLBracLoc());
    const unsigned close = sources.getFileOffset(block->getRBracLoc());
    blockRanges.emplace_back(open, close);

    // Annotate each child with the pragma in the gap before it; a pragma in the gap before `}` annotates nothing.
    std::vector<const Stmt*> children(block->body_begin(), block->body_end());
    std::vector<StatementText> texts;
    std::vector<SourceLocation> annotation(children.size());
    unsigned gapBegin = open + 1;
    auto takePragmasBefore = [&](unsigned gapEnd) {
      SourceLocation last;
      for (PendingPragma& candidate : pending)
        if (!candidate.matched && candidate.offset >= gapBegin && candidate.offset < gapEnd) {
          candidate.matched = true;
          last = candidate.pragma->location;
        }
      return last;
    };
    for (size_t i = 0; i < children.size(); ++i) {
      texts.push_back(statementText(children[i], sources, language));
      const unsigned childBegin =
          texts.back().problem.empty() ? texts.back().begin
                                       : sources.getFileOffset(sources.getExpansionLoc(children[i]->getBeginLoc()));
      annotation[i] = takePragmasBefore(childBegin);
      gapBegin = texts.back().problem.empty()
                     ? texts.back().end
                     : sources.getFileOffset(sources.getExpansionRange(children[i]->getEndLoc()).getEnd());
    }
    for (PendingPragma& candidate : pending)
      if (!candidate.matched && candidate.offset >= gapBegin && candidate.offset < close) {
        candidate.matched = true;
        scan.problems.push_back({PragmaProblem::Kind::NothingFollows, candidate.pragma->location});
      }

    // Runs of two or more consecutive annotated children are the groups.
    for (size_t first = 0; first < children.size();) {
      size_t last = first;
      while (last < children.size() && annotation[last].isValid()) ++last;
      if (last - first >= 2) {
        TileLoadGroup group;
        group.block = block;
        group.before.assign(children.begin(), children.begin() + std::ptrdiff_t(first));
        group.after.assign(children.begin() + std::ptrdiff_t(last), children.end());
        for (const auto& parent : context.getParents(*block))
          if (const auto* loop = parent.get<Stmt>(); loop && isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(loop))
            group.blockIsLoopBody = true;
        for (size_t i = first; i < last; ++i) {
          AnnotatedStatement annotated;
          annotated.statement = children[i];
          annotated.pragmaLocation = annotation[i];
          annotated.notMovable = texts[i].problem;
          if (isa<LabelStmt, CaseStmt, DefaultStmt>(children[i])) annotated.notMovable = "it is a jump target";
          const unsigned previousEnd = i == 0 ? open + 1 : texts[i - 1].end;
          std::optional<unsigned> chunkBegin = endOfLineAfter(text, previousEnd);
          std::optional<unsigned> chunkEnd = endOfLineAfter(text, texts[i].end);
          if (annotated.notMovable.empty() && i > 0 && !texts[i - 1].problem.empty())
            annotated.notMovable = "the statement before it comes from a macro expansion";
          if (annotated.notMovable.empty() && !chunkBegin)
            annotated.notMovable = "other code shares a line with the statement before it";
          if (annotated.notMovable.empty() && !chunkEnd) annotated.notMovable = "other code follows it on its line";
          if (annotated.notMovable.empty()) annotated.notMovable = leadingTextProblem(text, *chunkBegin, texts[i].begin);
          if (annotated.notMovable.empty()) {
            annotated.chunkBegin = *chunkBegin;
            annotated.chunkEnd = *chunkEnd;
          }
          group.statements.push_back(std::move(annotated));
        }
        scan.groups.push_back(std::move(group));
      }
      first = last == first ? first + 1 : last;
    }
  }

  // Unmatched pragmas inside a function body annotate a lone statement (a loop body without braces): nothing to
  // reorder. Outside every function body they annotate nothing.
  for (const PendingPragma& candidate : pending) {
    if (candidate.matched) continue;
    const bool insideBlock = std::any_of(blockRanges.begin(), blockRanges.end(), [&](const auto& range) {
      return range.first < candidate.offset && candidate.offset < range.second;
    });
    if (!insideBlock) scan.problems.push_back({PragmaProblem::Kind::OutsideFunction, candidate.pragma->location});
  }
  return scan;
}

}  // namespace cusync::tile_rewriter
