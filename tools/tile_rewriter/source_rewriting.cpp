#include "source_rewriting.h"

#include <algorithm>

#include "clang/Rewrite/Core/Rewriter.h"

namespace cusync::tile_rewriter {
namespace {

std::string quoted(const std::string& path) {
  std::string text = "\"";
  for (char c : path) {
    if (c == '"' || c == '\\') text += '\\';
    text += c;
  }
  return text + "\"";
}

// Renders ranges of the original text with the reorderings nested inside them applied. Groups can nest (an
// annotated loop containing its own annotated loads), so a moved chunk is rendered with its inner reorderings.
class Renderer {
public:
  Renderer(llvm::StringRef text, const clang::SourceManager& sources, const std::vector<Reordering>& reorderings,
           const LineDirectiveOptions& lines)
      : text_(text), sources_(sources), reorderings_(reorderings), lines_(lines) {
    std::sort(reorderings_.begin(), reorderings_.end(),
              [](const Reordering& a, const Reordering& b) { return a.begin < b.begin; });
  }

  std::string range(unsigned begin, unsigned end) const {
    std::string out;
    unsigned position = begin;
    for (const Reordering& inner : reorderings_) {
      if (inner.begin < position || inner.end > end) continue;  // outside, or nested in one already rendered
      out += text_.slice(position, inner.begin).str();
      out += reordering(inner);
      position = inner.end;
    }
    out += text_.slice(position, end).str();
    return out;
  }

  std::string reordering(const Reordering& reordering) const {
    std::string out;
    for (const auto& [chunkBegin, chunkEnd] : reordering.chunks) {
      out += lineDirective(chunkBegin);
      out += range(chunkBegin, chunkEnd);
    }
    out += lineDirective(reordering.end);
    return out;
  }

  // `#line N` naming the line that starts at `offset` (chunks and groups start and end at line starts).
  std::string lineDirective(unsigned offset) const {
    if (!lines_.enabled) return "";
    const unsigned line = offset >= text_.size()
                              ? sources_.getLineNumber(sources_.getMainFileID(), unsigned(text_.size())) + 1
                              : sources_.getLineNumber(sources_.getMainFileID(), offset);
    return "#line " + std::to_string(line) + " " + quoted(lines_.originalPath) + "\n";
  }

private:
  llvm::StringRef text_;
  const clang::SourceManager& sources_;
  std::vector<Reordering> reorderings_;
  const LineDirectiveOptions& lines_;
};

}  // namespace

std::string rewriteMainFile(clang::SourceManager& sources, const clang::LangOptions& language,
                            const std::vector<Reordering>& reorderings, const LineDirectiveOptions& lines) {
  const clang::FileID mainFile = sources.getMainFileID();
  const llvm::StringRef text = sources.getBufferData(mainFile);
  if (reorderings.empty()) return text.str();

  Renderer renderer(text, sources, reorderings, lines);
  clang::Rewriter rewriter(sources, language);
  const clang::SourceLocation fileStart = sources.getLocForStartOfFile(mainFile);
  for (const Reordering& reordering : reorderings) {
    const bool nested = std::any_of(reorderings.begin(), reorderings.end(), [&](const Reordering& outer) {
      return &outer != &reordering && outer.begin <= reordering.begin && reordering.end <= outer.end;
    });
    if (nested) continue;  // rendered as part of the group that contains it
    rewriter.ReplaceText(fileStart.getLocWithOffset(int(reordering.begin)), reordering.end - reordering.begin,
                         renderer.reordering(reordering));
  }
  if (lines.enabled) rewriter.InsertTextBefore(fileStart, renderer.lineDirective(0));
  const clang::RewriteBuffer* buffer = rewriter.getRewriteBufferFor(mainFile);
  return buffer ? std::string(buffer->begin(), buffer->end()) : text.str();
}

}  // namespace cusync::tile_rewriter
