// The .dep lexer: C++-compatible tokens for the subset of C++ a spec may use.
// Shared by the parser and by the embedded DSL's name recovery (which re-reads a declaration from its source).
#pragma once

#include <cusync/dsl/diagnostic.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cusync::dsl::detail {

enum class TokenKind {
  Identifier,
  Integer,
  // Punctuation and operators, named after their spelling.
  LeftParen, RightParen, LeftBrace, RightBrace, Comma, Semicolon, Dot, Assign,
  Plus, Minus, Star, Slash, Percent,
  Less, LessEqual, Greater, GreaterEqual, EqualEqual,
  EndOfFile,
};

struct Token {
  TokenKind kind = TokenKind::EndOfFile;
  std::string_view text;    // a view into the source text
  std::int64_t value = 0;   // Integer
  int line = 1;
  int column = 1;
};

// Human-readable spelling for messages: "identifier", "integer", "'('", "end of file", ...
std::string describe(TokenKind kind);
std::string describe(const Token& token);

// Splits `text` into tokens (always ending with EndOfFile). Comments (`//`, `/* */`) and whitespace are skipped.
// Lexical errors (stray bytes, floating-point or out-of-range literals, unterminated comments) are reported to
// `diagnostics` at their location and the offending bytes are skipped, so the parser still sees the rest.
// After Diagnostics::kMaxErrors stray bytes lexing stops, unless `keepGoing` (name recovery lexes whole C++ files,
// whose '#', '"' and ':' are no spec tokens but must not hide the declarations after them).
std::vector<Token> tokenize(std::string_view text, std::string_view file, Diagnostics& diagnostics,
                            bool keepGoing = false);

}  // namespace cusync::dsl::detail
