#include "name_recovery.h"

#include "lexer.h"

#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

namespace cusync::dsl::detail {
namespace {

struct LexedFile {
  std::string text;  // tokens view into it
  std::vector<Token> tokens;
};

const LexedFile* lexedFile(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<LexedFile>> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second.get();
  std::ifstream in(path, std::ios::binary);
  if (!in) return nullptr;
  std::ostringstream text;
  text << in.rdbuf();
  auto file = std::make_unique<LexedFile>();
  file->text = text.str();
  Diagnostics ignored;  // C++ files hold more than spec tokens; lexical errors elsewhere do not matter here
  file->tokens = tokenize(file->text, path, ignored, /*keepGoing=*/true);
  return (cache[path] = std::move(file)).get();
}

bool isDeclarationKeyword(const Token& token) {
  if (token.kind != TokenKind::Identifier) return false;
  for (std::string_view keyword : {"Param", "Symbolic", "Dim", "Grid", "Tile", "ForAll", "Dep"}) {
    if (token.text == keyword) return true;
  }
  return false;
}

}  // namespace

std::optional<RecoveredName> recoverDeclaredName(const std::source_location& where) {
  const LexedFile* file = lexedFile(where.file_name());
  if (file == nullptr) return std::nullopt;
  const auto& tokens = file->tokens;
  int line = static_cast<int>(where.line());
  int column = static_cast<int>(where.column());

  // The last token starting at or before the captured position.
  std::ptrdiff_t i = -1;
  for (std::size_t k = 0; k + 1 < tokens.size(); ++k) {
    if (tokens[k].line < line || (tokens[k].line == line && tokens[k].column <= column)) {
      i = static_cast<std::ptrdiff_t>(k);
    } else {
      break;
    }
  }
  if (i < 0) return std::nullopt;

  int depth = 0;
  for (; i >= 0; --i) {
    const Token& token = tokens[i];
    if (token.kind == TokenKind::RightParen || token.kind == TokenKind::RightBrace) {
      ++depth;
      continue;
    }
    if (token.kind == TokenKind::LeftParen || token.kind == TokenKind::LeftBrace) {
      if (depth > 0) {
        --depth;
        continue;
      }
      if (token.kind == TokenKind::LeftBrace) break;  // start of a block: the declarator follows it
      continue;  // the position was inside the declaration's own parentheses
    }
    if (depth > 0) continue;
    if (token.kind == TokenKind::Comma || token.kind == TokenKind::Semicolon) break;
    if (isDeclarationKeyword(token) && !(i + 1 < static_cast<std::ptrdiff_t>(tokens.size()) &&
                                         tokens[i + 1].kind == TokenKind::LeftParen)) {
      break;
    }
  }
  const Token& name = tokens[static_cast<std::size_t>(i + 1)];
  if (name.kind != TokenKind::Identifier || isDeclarationKeyword(name)) return std::nullopt;
  return RecoveredName{std::string(name.text), spec::SourceLocation{where.file_name(), name.line, name.column}};
}

}  // namespace cusync::dsl::detail
