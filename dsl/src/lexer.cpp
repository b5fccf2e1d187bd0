#include "lexer.h"

#include <fmt/format.h>

#include <cctype>
#include <limits>

namespace cusync::dsl::detail {
namespace {

bool isIdentifierStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentifierPart(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Walks the text keeping line and column (1-based, in bytes; a tab is one column, and the caret line copies tabs).
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}
  bool atEnd() const { return position_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const {
    return position_ + ahead < text_.size() ? text_[position_ + ahead] : '\0';
  }
  void advance() {
    if (text_[position_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++position_;
  }
  std::size_t position() const { return position_; }
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  std::string_view text_;
  std::size_t position_ = 0;
  int line_ = 1;
  int column_ = 1;
};

struct Punctuation {
  std::string_view spelling;
  TokenKind kind;
};
// Longest spellings first, so "<=" wins over "<".
constexpr Punctuation kPunctuation[] = {
    {"<=", TokenKind::LessEqual}, {">=", TokenKind::GreaterEqual}, {"==", TokenKind::EqualEqual},
    {"(", TokenKind::LeftParen},  {")", TokenKind::RightParen},    {"{", TokenKind::LeftBrace},
    {"}", TokenKind::RightBrace}, {",", TokenKind::Comma},         {";", TokenKind::Semicolon},
    {".", TokenKind::Dot},        {"=", TokenKind::Assign},        {"+", TokenKind::Plus},
    {"-", TokenKind::Minus},      {"*", TokenKind::Star},          {"/", TokenKind::Slash},
    {"%", TokenKind::Percent},    {"<", TokenKind::Less},          {">", TokenKind::Greater},
};

std::string printableByte(char c) {
  auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x21 && byte < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", byte);
}

}  // namespace

std::string describe(TokenKind kind) {
  switch (kind) {
    case TokenKind::Identifier: return "identifier";
    case TokenKind::Integer: return "integer";
    case TokenKind::EndOfFile: return "end of file";
    default: break;
  }
  for (const auto& p : kPunctuation) {
    if (p.kind == kind) return fmt::format("'{}'", p.spelling);
  }
  return "token";
}

std::string describe(const Token& token) {
  if (token.kind == TokenKind::Identifier || token.kind == TokenKind::Integer) {
    return fmt::format("{} '{}'", describe(token.kind), token.text);
  }
  return describe(token.kind);
}

std::vector<Token> tokenize(std::string_view text, std::string_view file, Diagnostics& diagnostics,
                            bool keepGoing) {
  std::vector<Token> tokens;
  Cursor cursor(text);
  auto here = [&] { return spec::SourceLocation{std::string(file), cursor.line(), cursor.column()}; };

  while (!cursor.atEnd()) {
    char c = cursor.peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      cursor.advance();
      continue;
    }
    if (c == '/' && cursor.peek(1) == '/') {
      while (!cursor.atEnd() && cursor.peek() != '\n') cursor.advance();
      continue;
    }
    if (c == '/' && cursor.peek(1) == '*') {
      auto start = here();
      cursor.advance();
      cursor.advance();
      bool closed = false;
      while (!cursor.atEnd()) {
        if (cursor.peek() == '*' && cursor.peek(1) == '/') {
          cursor.advance();
          cursor.advance();
          closed = true;
          break;
        }
        cursor.advance();
      }
      if (!closed) diagnostics.error(start, "unterminated /* comment");
      continue;
    }

    Token token;
    token.line = cursor.line();
    token.column = cursor.column();
    std::size_t start = cursor.position();

    if (isIdentifierStart(c)) {
      while (!cursor.atEnd() && isIdentifierPart(cursor.peek())) cursor.advance();
      token.kind = TokenKind::Identifier;
      token.text = text.substr(start, cursor.position() - start);
      tokens.push_back(token);
      continue;
    }

    if (isDigit(c)) {
      // Take the whole C++ pp-number so that 1.5, 1e3, 0x10 and 12u are rejected as one token, not split.
      while (!cursor.atEnd() && (isIdentifierPart(cursor.peek()) || cursor.peek() == '.' || cursor.peek() == '\'')) {
        cursor.advance();
      }
      token.kind = TokenKind::Integer;
      token.text = text.substr(start, cursor.position() - start);
      auto location = spec::SourceLocation{std::string(file), token.line, token.column};
      bool decimal = true;
      for (char d : token.text) decimal = decimal && isDigit(d);
      if (!decimal) {
        bool looksFloating = token.text.find_first_of(".eE") != std::string_view::npos &&
                             token.text.substr(0, 2) != "0x" && token.text.substr(0, 2) != "0X";
        diagnostics.error(location, looksFloating
                                        ? fmt::format("'{}' is not an integer; extents, tiles and parameters are "
                                                      "integers",
                                                      token.text)
                                        : fmt::format("unsupported literal '{}'; write integers in decimal without "
                                                      "suffixes",
                                                      token.text));
        continue;
      }
      if (token.text.size() > 1 && token.text[0] == '0') {
        // In C++ a leading 0 means octal; reject rather than silently disagree with the embedded DSL.
        diagnostics.error(location, fmt::format("'{}' has a leading zero (octal in C++); write it in decimal",
                                                token.text));
        continue;
      }
      std::int64_t value = 0;
      bool overflow = false;
      for (char d : token.text) {
        if (value > (std::numeric_limits<std::int64_t>::max() - (d - '0')) / 10) {
          overflow = true;
          break;
        }
        value = value * 10 + (d - '0');
      }
      if (overflow) {
        diagnostics.error(location, fmt::format("integer literal '{}' does not fit in 64 bits", token.text));
        continue;
      }
      token.value = value;
      tokens.push_back(token);
      continue;
    }

    bool matched = false;
    for (const auto& p : kPunctuation) {
      if (text.substr(start, p.spelling.size()) == p.spelling) {
        for (std::size_t i = 0; i < p.spelling.size(); ++i) cursor.advance();
        token.kind = p.kind;
        token.text = text.substr(start, p.spelling.size());
        tokens.push_back(token);
        matched = true;
        break;
      }
    }
    if (matched) continue;

    diagnostics.error(here(), fmt::format("unexpected {} in spec", printableByte(c)));
    cursor.advance();
    if (!keepGoing && diagnostics.errorCount() >= Diagnostics::kMaxErrors) {
      diagnostics.error(here(), "too many errors");  // recorded once, as the "stopping" note
      break;
    }
  }

  Token end;
  end.kind = TokenKind::EndOfFile;
  end.line = cursor.line();
  end.column = cursor.column();
  tokens.push_back(end);
  return tokens;
}

}  // namespace cusync::dsl::detail
