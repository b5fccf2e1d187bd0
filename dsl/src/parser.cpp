#include <cusync/dsl/cpp_names.h>
#include <cusync/dsl/limits.h>
#include <cusync/dsl/parser.h>

#include "lexer.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace cusync::dsl {
namespace {

using detail::Token;
using detail::TokenKind;

// Words of the notation. They cannot name declarations (in C++ they are the DSL's types and functions; a
// declaration named `min` would hide the function in the C++ reading of the file).
constexpr std::string_view kReservedWords[] = {"Param", "Symbolic", "Where", "Dim", "Grid", "Tile",
                                               "ForAll", "Range",    "Dep",   "min", "max"};

bool isReserved(std::string_view word) {
  for (auto reserved : kReservedWords) {
    if (reserved == word) return true;
  }
  return false;
}

// Thrown to abandon the current statement after an error has been reported; the parser resumes after the next ';'.
struct StatementAbandoned {};

// What a declared name stands for.
struct Symbol {
  enum class Kind { Parameter, Dimension, Grid, Tile, TileSet, Dependency } kind;
  spec::SourceLocation location;
  std::size_t index = 0;  // into the spec's parameters/dimensions/grids/dependencies, or the parser's tiles
};

std::string_view kindName(Symbol::Kind kind) {
  switch (kind) {
    case Symbol::Kind::Parameter: return "parameter";
    case Symbol::Kind::Dimension: return "dimension";
    case Symbol::Kind::Grid: return "grid";
    case Symbol::Kind::Tile: return "tile";
    case Symbol::Kind::TileSet: return "ForAll tile set";
    case Symbol::Kind::Dependency: return "dependency";
  }
  return "name";
}

// An expression with the C++ type its value would have if it is a constant: int literals and their arithmetic are
// 32-bit `int` in C++, larger literals `long`. Folding must overflow where C++ would, or the two front ends diverge.
struct TypedExpr {
  spec::Expr expr;
  bool isLong = false;
};

class Parser {
 public:
  Parser(std::string_view text, std::string_view file, Diagnostics& diagnostics)
      : file_(file), diagnostics_(diagnostics) {
    tokens_ = detail::tokenize(text, file, diagnostics);
    spec_.name = specNameFromPath(file);
  }

  std::optional<spec::Spec> parse() {
    // Lexical errors already make the result unusable, but parsing on gives the user all errors at once.
    while (peek().kind != TokenKind::EndOfFile) {
      if (diagnostics_.errorCount() >= Diagnostics::kMaxErrors) break;
      try {
        statement();
      } catch (const StatementAbandoned&) {
        skipPastSemicolon();
      }
    }
    if (diagnostics_.hasErrors()) return std::nullopt;
    return std::move(spec_);
  }

 private:
  // ---- token helpers ----
  const Token& peek(std::size_t ahead = 0) const {
    std::size_t i = std::min(position_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& next() {
    const Token& token = tokens_[position_];
    if (position_ + 1 < tokens_.size()) ++position_;
    return token;
  }
  spec::SourceLocation locationOf(const Token& token) const {
    return spec::SourceLocation{file_, token.line, token.column};
  }
  [[noreturn]] void fail(const Token& at, std::string message) {
    diagnostics_.error(locationOf(at), std::move(message));
    throw StatementAbandoned{};
  }
  const Token& expect(TokenKind kind, std::string_view context) {
    if (peek().kind != kind) {
      fail(peek(), fmt::format("expected {} {}, found {}", detail::describe(kind), context, detail::describe(peek())));
    }
    return next();
  }
  bool accept(TokenKind kind) {
    if (peek().kind != kind) return false;
    next();
    return true;
  }
  bool peekWord(std::string_view word, std::size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::Identifier && peek(ahead).text == word;
  }
  void skipPastSemicolon() {
    while (peek().kind != TokenKind::EndOfFile && peek().kind != TokenKind::Semicolon) next();
    accept(TokenKind::Semicolon);
  }

  // ---- names ----
  const Token& declaredName(std::string_view what) {
    const Token& name = expect(TokenKind::Identifier, fmt::format("(the {}'s name)", what));
    std::string text(name.text);
    if (isReserved(text)) fail(name, fmt::format("'{}' is a word of the notation and cannot name a {}", text, what));
    // A .dep file is also C++, and names reach the generated header: they must be usable C++ identifiers.
    if (auto why = unusableCppName(text))
      fail(name, fmt::format("'{}' cannot name a {}: {} (a spec is also C++, and its names appear in the "
                             "generated header)",
                             text, what, *why));
    if (auto it = symbols_.find(text); it != symbols_.end()) {
      auto& d = diagnostics_.error(locationOf(name), fmt::format("redeclaration of '{}'", text));
      const auto& previous = it->second.location;
      d.notes.push_back(fmt::format("previously declared as a {} at {}:{}:{}", kindName(it->second.kind),
                                    previous.file, previous.line, previous.column));
      throw StatementAbandoned{};
    }
    return name;
  }
  void declare(const Token& name, Symbol::Kind kind, std::size_t index) {
    symbols_[std::string(name.text)] = Symbol{kind, locationOf(name), index};
  }
  const Symbol& lookup(const Token& name) {
    auto it = symbols_.find(std::string(name.text));
    if (it == symbols_.end()) {
      if (isReserved(name.text)) fail(name, fmt::format("'{}' cannot be used here", name.text));
      fail(name, fmt::format("unknown name '{}'", name.text));
    }
    return it->second;
  }
  const Symbol& lookupAs(const Token& name, Symbol::Kind kind, std::string_view expected) {
    const Symbol& symbol = lookup(name);
    if (symbol.kind != kind) {
      fail(name, fmt::format("'{}' is a {}, but {} is expected here", name.text, kindName(symbol.kind), expected));
    }
    return symbol;
  }

  // ---- statements ----
  void statement() {
    const Token& keyword = peek();
    if (keyword.kind != TokenKind::Identifier) {
      fail(keyword, fmt::format("expected a declaration (Param, Symbolic, Where, Dim, Grid, Tile, ForAll, Dep), "
                                "found {}",
                                detail::describe(keyword)));
    }
    if (keyword.text == "Param" || keyword.text == "Symbolic") return parameterDeclarations();
    if (keyword.text == "Where") return whereStatement();
    if (keyword.text == "Dim") return declarationList([this] { dimensionDeclaration(); });
    if (keyword.text == "Grid") return declarationList([this] { gridDeclaration(); });
    if (keyword.text == "Tile") return declarationList([this] { tileDeclaration(); });
    if (keyword.text == "ForAll") return declarationList([this] { forAllDeclaration(); });
    if (keyword.text == "Dep") return declarationList([this] { dependencyDeclaration(); });
    if (symbols_.count(std::string(keyword.text)) == 0 && !isReserved(keyword.text)) {
      fail(keyword, fmt::format("unknown declaration '{}'; expected Param, Symbolic, Where, Dim, Grid, Tile, "
                                "ForAll or Dep",
                                keyword.text));
    }
    fail(keyword, fmt::format("expected a declaration, found '{}' (statements other than declarations are not "
                              "part of a spec)",
                              keyword.text));
  }

  template <typename Declaration>
  void declarationList(Declaration declaration) {
    next();  // the keyword
    do {
      declaration();
    } while (accept(TokenKind::Comma));
    expect(TokenKind::Semicolon, "after the declaration");
  }

  void parameterDeclarations() {
    bool symbolic = next().text == "Symbolic";
    do {
      const Token& name = declaredName("parameter");
      expect(TokenKind::Assign, fmt::format("after parameter '{}' (parameters need a default value)", name.text));
      const Token& valueStart = peek();
      TypedExpr value = expression();
      if (value.expr.kind != spec::Expr::Kind::Constant) {
        fail(valueStart, fmt::format("the value of parameter '{}' must be an integer constant", name.text));
      }
      spec::Parameter parameter;
      parameter.name = std::string(name.text);
      parameter.defaultValue = value.expr.value;
      parameter.symbolic = symbolic;
      parameter.location = locationOf(name);
      declare(name, Symbol::Kind::Parameter, spec_.parameters.size());
      spec_.parameters.push_back(std::move(parameter));
    } while (accept(TokenKind::Comma));
    expect(TokenKind::Semicolon, "after the parameter declaration");
  }

  void whereStatement() {
    const Token& keyword = next();
    expect(TokenKind::LeftParen, "after Where");
    int count = 0;
    do {
      if (++count > kMaxConstraintsPerWhere) {
        fail(peek(), fmt::format("at most {} constraints per Where; write another Where", kMaxConstraintsPerWhere));
      }
      constraint();
    } while (accept(TokenKind::Comma));
    expect(TokenKind::RightParen, "to close Where(");
    expect(TokenKind::Semicolon, "after Where(...)");
    (void)keyword;
  }

  void constraint() {
    const Token& start = peek();
    spec::Constraint constraint;
    constraint.location = locationOf(start);
    constraint.lhs = expression().expr;
    const Token& relation = next();
    switch (relation.kind) {
      case TokenKind::Less: constraint.relation = spec::Constraint::Relation::Less; break;
      case TokenKind::LessEqual: constraint.relation = spec::Constraint::Relation::LessEqual; break;
      case TokenKind::EqualEqual: constraint.relation = spec::Constraint::Relation::Equal; break;
      case TokenKind::GreaterEqual: constraint.relation = spec::Constraint::Relation::GreaterEqual; break;
      case TokenKind::Greater: constraint.relation = spec::Constraint::Relation::Greater; break;
      default:
        fail(relation, fmt::format("expected a comparison (<, <=, ==, >=, >) in the constraint, found {}",
                                   detail::describe(relation)));
    }
    constraint.rhs = expression().expr;
    // A constraint belongs to the most recently declared symbolic parameter it mentions (the embedded DSL's rule).
    std::optional<std::size_t> owner;
    auto visit = [&](auto&& self, const spec::Expr& e) -> void {
      if (e.kind == spec::Expr::Kind::Parameter) {
        auto it = symbols_.find(e.name);
        std::size_t index = it->second.index;
        if (spec_.parameters[index].symbolic && (!owner || index > *owner)) owner = index;
      }
      for (const auto& operand : e.operands) self(self, operand);
    };
    visit(visit, constraint.lhs);
    visit(visit, constraint.rhs);
    if (!owner) fail(start, "this constraint mentions no symbolic parameter (declare one with Symbolic)");
    spec_.parameters[*owner].constraints.push_back(std::move(constraint));
  }

  void dimensionDeclaration() {
    const Token& name = declaredName("dimension");
    declare(name, Symbol::Kind::Dimension, spec_.dimensions.size());
    spec_.dimensions.push_back(spec::Dimension{std::string(name.text), locationOf(name)});
  }

  void gridDeclaration() {
    const Token& name = declaredName("grid");
    const Token& open = expect(TokenKind::LeftParen, fmt::format("after grid '{}'", name.text));
    std::vector<std::pair<const Token*, TypedExpr>> arguments;
    if (peek().kind != TokenKind::RightParen) {
      do {
        const Token* start = &peek();
        arguments.emplace_back(start, expression());
      } while (accept(TokenKind::Comma));
    }
    expect(TokenKind::RightParen, fmt::format("to close grid '{}'", name.text));
    std::size_t count = arguments.size();
    if (count == 0 || count % 2 != 0 || count > 2 * kMaxGridDimensions) {
      fail(open, fmt::format("grid '{}' has {} arguments; a grid takes 1 to 3 dimensions followed by one extent "
                             "per dimension, e.g. Grid {}(x, y, X, Y)",
                             name.text, count, name.text));
    }
    spec::Grid grid;
    grid.name = std::string(name.text);
    grid.location = locationOf(name);
    for (std::size_t i = 0; i < count / 2; ++i) {
      const spec::Expr& dimension = arguments[i].second.expr;
      if (dimension.kind != spec::Expr::Kind::Dimension) {
        fail(*arguments[i].first, fmt::format("argument {} of grid '{}' must be a dimension (declared with Dim); "
                                              "a grid takes its {} dimensions first, then their extents",
                                              i + 1, name.text, count / 2));
      }
      grid.dimensions.push_back(dimension.name);
    }
    for (std::size_t i = count / 2; i < count; ++i) grid.extents.push_back(arguments[i].second.expr);
    declare(name, Symbol::Kind::Grid, spec_.grids.size());
    spec_.grids.push_back(std::move(grid));
  }

  void tileDeclaration() {
    const Token& name = declaredName("tile");
    spec::Tile tile = tileArguments(name);
    tile.location = locationOf(name);
    declare(name, Symbol::Kind::Tile, tiles_.size());
    tiles_.push_back(spec::TileSet{tile, {}, locationOf(name)});
  }

  // `(e0, e1, e2)` after `Tile` or a tile's name: 1 to 3 coordinates.
  spec::Tile tileArguments(const Token& at) {
    expect(TokenKind::LeftParen, "to start the tile's coordinates");
    spec::Tile tile;
    tile.location = locationOf(at);
    do {
      if (static_cast<int>(tile.coordinates.size()) == kMaxGridDimensions) {
        fail(peek(), fmt::format("a tile has at most {} coordinates (x, y, z)", kMaxGridDimensions));
      }
      tile.coordinates.push_back(expression().expr);
    } while (accept(TokenKind::Comma));
    expect(TokenKind::RightParen, "to close the tile's coordinates");
    return tile;
  }

  void forAllDeclaration() {
    const Token& name = declaredName("ForAll tile set");
    spec::TileSet set = forAllArguments(name);
    set.location = locationOf(name);
    declare(name, Symbol::Kind::TileSet, tiles_.size());
    tiles_.push_back(std::move(set));
  }

  // `(tiles, dim, Range(...))` after `ForAll` or a ForAll's name.
  spec::TileSet forAllArguments(const Token& at) {
    expect(TokenKind::LeftParen, "after ForAll");
    spec::TileSet set = tileSetExpression();
    set.location = locationOf(at);
    expect(TokenKind::Comma, "after the ForAll's tile");
    const Token& dimension = expect(TokenKind::Identifier, "(the dimension the ForAll ranges over)");
    lookupAs(dimension, Symbol::Kind::Dimension, "a dimension (the ForAll's second argument)");
    expect(TokenKind::Comma, "after the ForAll's dimension");
    spec::Range range = rangeExpression();
    expect(TokenKind::RightParen, "to close ForAll(");
    set.ranges.push_back({std::string(dimension.text), std::move(range)});
    return set;
  }

  spec::Range rangeExpression() {
    const Token& keyword = peek();
    if (!peekWord("Range")) fail(keyword, fmt::format("expected Range(...), found {}", detail::describe(keyword)));
    next();
    expect(TokenKind::LeftParen, "after Range");
    spec::Range range;
    range.location = locationOf(keyword);
    spec::Expr first = expression().expr;
    if (accept(TokenKind::Comma)) {
      range.lower = std::move(first);
      range.upper = expression().expr;
    } else {
      range.lower = spec::Expr{};  // Range(hi) is Range(0, hi); the constant 0 carries no location
      range.upper = std::move(first);
    }
    expect(TokenKind::RightParen, "to close Range(");
    return range;
  }

  // A tile or a set of tiles: `Tile(...)`, `ForAll(...)`, or the name of a declared Tile or ForAll.
  spec::TileSet tileSetExpression() {
    const Token& start = peek();
    if (peekWord("Tile")) {
      next();
      spec::Tile tile = tileArguments(start);
      return spec::TileSet{std::move(tile), {}, locationOf(start)};
    }
    if (peekWord("ForAll")) {
      next();
      return forAllArguments(start);
    }
    if (start.kind != TokenKind::Identifier) {
      fail(start, fmt::format("expected a tile (Tile(...), ForAll(...) or a declared tile), found {}",
                              detail::describe(start)));
    }
    next();
    const Symbol& symbol = lookup(start);
    if (symbol.kind != Symbol::Kind::Tile && symbol.kind != Symbol::Kind::TileSet) {
      fail(start, fmt::format("'{}' is a {}, but a tile is expected here", start.text, kindName(symbol.kind)));
    }
    spec::TileSet set = tiles_[symbol.index];
    set.location = locationOf(start);
    return set;
  }

  void dependencyDeclaration() {
    const Token& name = declaredName("dependency");
    expect(TokenKind::LeftParen, fmt::format("after dependency '{}'", name.text));
    spec::Dependency dependency;
    dependency.name = std::string(name.text);
    dependency.location = locationOf(name);

    // Consumer: {grid, tile}
    expect(TokenKind::LeftBrace, "to start the consumer {grid, tile}");
    const Token& consumerGrid = expect(TokenKind::Identifier, "(the consumer grid)");
    lookupAs(consumerGrid, Symbol::Kind::Grid, "a grid");
    dependency.consumerGrid = std::string(consumerGrid.text);
    expect(TokenKind::Comma, "after the consumer grid");
    const Token& consumerTileStart = peek();
    spec::TileSet consumer = tileSetExpression();
    if (!consumer.ranges.empty()) {
      fail(consumerTileStart, "the consumer of a dependency is one tile, not a ForAll; the ForAll belongs on the "
                              "producer side");
    }
    dependency.consumerTile = std::move(consumer.tile);
    dependency.consumerTile.location = locationOf(consumerTileStart);
    if (peek().kind == TokenKind::Comma) {
      fail(peek(), "the consumer of a dependency is one tile: {grid, tile}");
    }
    expect(TokenKind::RightBrace, "to close the consumer {grid, tile}");

    // Producers: {grid, tiles...}, ...
    if (peek().kind != TokenKind::Comma) {
      fail(peek(), fmt::format("dependency '{}' needs at least one producer {{grid, tiles...}} after the consumer",
                               name.text));
    }
    while (accept(TokenKind::Comma)) {
      if (static_cast<int>(dependency.producers.size()) == kMaxProducersPerDependency) {
        fail(peek(), fmt::format("at most {} producers per dependency", kMaxProducersPerDependency));
      }
      dependency.producers.push_back(producer());
    }
    expect(TokenKind::RightParen, fmt::format("to close dependency '{}'", name.text));
    declare(name, Symbol::Kind::Dependency, spec_.dependencies.size());
    spec_.dependencies.push_back(std::move(dependency));
  }

  spec::ProducerTiles producer() {
    const Token& open = expect(TokenKind::LeftBrace, "to start a producer {grid, tiles...}");
    spec::ProducerTiles producer;
    producer.location = locationOf(open);
    const Token& grid = expect(TokenKind::Identifier, "(the producer grid)");
    lookupAs(grid, Symbol::Kind::Grid, "a grid");
    producer.grid = std::string(grid.text);
    if (peek().kind != TokenKind::Comma) {
      fail(peek(), fmt::format("producer '{}' needs at least one tile: {{{}, Tile(...)}}", grid.text, grid.text));
    }
    while (accept(TokenKind::Comma)) {
      if (static_cast<int>(producer.tiles.size()) == kMaxTileSetsPerProducer) {
        fail(peek(), fmt::format("at most {} tiles per producer", kMaxTileSetsPerProducer));
      }
      producer.tiles.push_back(tileSetExpression());
    }
    expect(TokenKind::RightBrace, "to close the producer {grid, tiles...}");
    return producer;
  }

  // ---- expressions (C++ precedence and associativity) ----
  static constexpr int kMaxNesting = 200;  // deeper nesting is an error, not a stack overflow

  TypedExpr expression() {
    if (++depth_ > kMaxNesting) fail(peek(), fmt::format("expression nested deeper than {} levels", kMaxNesting));
    TypedExpr left = term();
    while (peek().kind == TokenKind::Plus || peek().kind == TokenKind::Minus) {
      const Token& op = next();
      TypedExpr right = term();
      left = binary(op, op.kind == TokenKind::Plus ? spec::Expr::Kind::Add : spec::Expr::Kind::Sub,
                    std::move(left), std::move(right));
    }
    --depth_;
    return left;
  }

  TypedExpr term() {
    TypedExpr left = unary();
    while (peek().kind == TokenKind::Star || peek().kind == TokenKind::Slash || peek().kind == TokenKind::Percent) {
      const Token& op = next();
      TypedExpr right = unary();
      auto kind = op.kind == TokenKind::Star    ? spec::Expr::Kind::Mul
                  : op.kind == TokenKind::Slash ? spec::Expr::Kind::FloorDiv
                                                : spec::Expr::Kind::Mod;
      left = binary(op, kind, std::move(left), std::move(right));
    }
    return left;
  }

  TypedExpr unary() {
    if (peek().kind == TokenKind::Minus || peek().kind == TokenKind::Plus) {
      if (++depth_ > kMaxNesting) fail(peek(), fmt::format("expression nested deeper than {} levels", kMaxNesting));
      const Token& op = next();
      TypedExpr operand = unary();
      --depth_;
      if (op.kind == TokenKind::Plus) return operand;
      if (operand.expr.kind == spec::Expr::Kind::Constant) {
        return foldedConstant(op, -static_cast<__int128>(operand.expr.value), operand.isLong);
      }
      spec::Expr negated;
      negated.kind = spec::Expr::Kind::Neg;
      negated.location = locationOf(op);
      negated.operands.push_back(std::move(operand.expr));
      return {std::move(negated), false};
    }
    return primary();
  }

  TypedExpr primary() {
    const Token& token = peek();
    if (token.kind == TokenKind::Integer) {
      next();
      spec::Expr constant;
      constant.kind = spec::Expr::Kind::Constant;
      constant.value = token.value;
      constant.location = locationOf(token);
      return {std::move(constant), token.value > std::numeric_limits<std::int32_t>::max()};
    }
    if (token.kind == TokenKind::LeftParen) {
      next();
      TypedExpr inner = expression();
      expect(TokenKind::RightParen, "to close '('");
      return inner;
    }
    if (token.kind == TokenKind::Identifier && (token.text == "min" || token.text == "max")) {
      next();
      return minMax(token);
    }
    if (token.kind == TokenKind::Identifier) {
      next();
      const Symbol& symbol = lookup(token);
      spec::Expr e;
      e.location = locationOf(token);
      switch (symbol.kind) {
        case Symbol::Kind::Parameter:
          e.kind = spec::Expr::Kind::Parameter;
          e.name = std::string(token.text);
          return {std::move(e), false};
        case Symbol::Kind::Dimension:
          e.kind = spec::Expr::Kind::Dimension;
          e.name = std::string(token.text);
          return {std::move(e), false};
        case Symbol::Kind::Grid: {
          if (!accept(TokenKind::Dot)) {
            fail(token, fmt::format("grid '{}' is not a number; its extents are {}.x, {}.y and {}.z", token.text,
                                    token.text, token.text, token.text));
          }
          const Token& member = expect(TokenKind::Identifier, "after '.' (x, y or z)");
          static constexpr std::string_view kMembers[] = {"x", "y", "z"};
          int index = -1;
          for (int i = 0; i < 3; ++i) index = member.text == kMembers[i] ? i : index;
          if (index < 0) {
            fail(member, fmt::format("a grid's extents are .x, .y and .z, not .{}", member.text));
          }
          e.kind = spec::Expr::Kind::GridExtent;
          e.name = std::string(token.text);
          e.dimensionIndex = index;
          return {std::move(e), false};
        }
        default:
          fail(token, fmt::format("'{}' is a {}, not an integer expression", token.text, kindName(symbol.kind)));
      }
    }
    fail(token, fmt::format("expected an integer expression, found {}", detail::describe(token)));
  }

  // `min(a, b)` / `max(a, b)`, after the function's name: exactly two operands. Not folded, even for constants:
  // in the C++ reading the DSL's min/max build the same expression, whatever their operands.
  TypedExpr minMax(const Token& function) {
    expect(TokenKind::LeftParen, fmt::format("after '{}' ({}(a, b) takes two expressions)", function.text,
                                             function.text));
    std::vector<spec::Expr> operands;
    if (peek().kind != TokenKind::RightParen) {
      do {
        if (operands.size() == 2) {
          fail(peek(), fmt::format("{}(a, b) takes two expressions; nest it for more: {}(a, {}(b, c))",
                                   function.text, function.text, function.text));
        }
        operands.push_back(expression().expr);
      } while (accept(TokenKind::Comma));
    }
    if (operands.size() != 2) {
      fail(function, fmt::format("{}(a, b) takes two expressions, found {}", function.text, operands.size()));
    }
    expect(TokenKind::RightParen, fmt::format("to close {}(", function.text));
    spec::Expr e;
    e.kind = function.text == "min" ? spec::Expr::Kind::Min : spec::Expr::Kind::Max;
    e.location = locationOf(function);
    e.operands = std::move(operands);
    return {std::move(e), false};
  }

  TypedExpr binary(const Token& op, spec::Expr::Kind kind, TypedExpr left, TypedExpr right) {
    if (left.expr.kind == spec::Expr::Kind::Constant && right.expr.kind == spec::Expr::Kind::Constant) {
      __int128 a = left.expr.value;
      __int128 b = right.expr.value;
      bool isLong = left.isLong || right.isLong;
      switch (kind) {
        case spec::Expr::Kind::Add: return foldedConstant(op, a + b, isLong);
        case spec::Expr::Kind::Sub: return foldedConstant(op, a - b, isLong);
        case spec::Expr::Kind::Mul: return foldedConstant(op, a * b, isLong);
        case spec::Expr::Kind::FloorDiv:
        case spec::Expr::Kind::Mod:
          if (b == 0) fail(op, fmt::format("division by zero in {} {} 0", left.expr.value, op.text));
          // C++ integer division truncates toward zero (the C++ compiler folds these in the embedded DSL).
          return foldedConstant(op, kind == spec::Expr::Kind::FloorDiv ? a / b : a % b, isLong);
        default: break;
      }
    }
    spec::Expr e;
    e.kind = kind;
    e.location = locationOf(op);
    e.operands.push_back(std::move(left.expr));
    e.operands.push_back(std::move(right.expr));
    return {std::move(e), false};
  }

  TypedExpr foldedConstant(const Token& op, __int128 value, bool isLong) {
    __int128 low = isLong ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int32_t>::min();
    __int128 high = isLong ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int32_t>::max();
    if (value < low || value > high) {
      fail(op, isLong ? std::string("integer overflow in constant expression (64 bits)")
                      : std::string("integer overflow in constant expression: C++ computes it in 32-bit int; "
                                    "write a literal above 2147483647 or use a parameter"));
    }
    spec::Expr constant;
    constant.kind = spec::Expr::Kind::Constant;
    constant.value = static_cast<std::int64_t>(value);
    constant.location = locationOf(op);
    return {std::move(constant), isLong};
  }

  std::string file_;
  Diagnostics& diagnostics_;
  std::vector<Token> tokens_;
  std::size_t position_ = 0;
  int depth_ = 0;
  spec::Spec spec_;
  std::map<std::string, Symbol> symbols_;
  std::vector<spec::TileSet> tiles_;  // declared Tiles (as TileSets without ranges) and ForAlls
};

}  // namespace

std::string specNameFromPath(std::string_view path) {
  return std::filesystem::path(std::string(path)).stem().string();
}

std::optional<spec::Spec> parseSpec(std::string_view text, std::string_view file, Diagnostics& diagnostics) {
  if (text.size() > kMaxSpecFileBytes) {
    diagnostics.error(spec::SourceLocation{std::string(file), 0, 0},
                      fmt::format("spec is {} bytes; the limit is {} bytes (a spec is a few declarations)",
                                  text.size(), kMaxSpecFileBytes));
    return std::nullopt;
  }
  // A NUL byte means this is not a text file at all; one clear error beats twenty about stray bytes.
  if (auto nul = text.find('\0'); nul != std::string_view::npos) {
    int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n'));
    auto lineStart = text.rfind('\n', nul);
    int column = static_cast<int>(nul - (lineStart == std::string_view::npos ? 0 : lineStart + 1)) + 1;
    diagnostics.error(spec::SourceLocation{std::string(file), line, column},
                      "spec is not a text file (it contains a NUL byte)");
    return std::nullopt;
  }
  return Parser(text, file, diagnostics).parse();
}

std::optional<spec::Spec> parseSpecFile(const std::string& path, SourceTexts& sources, Diagnostics& diagnostics) {
  std::error_code error;
  auto size = std::filesystem::file_size(path, error);
  if (error || std::filesystem::is_directory(path)) {
    diagnostics.error(spec::SourceLocation{path, 0, 0},
                      fmt::format("cannot read spec file: {}", error ? error.message() : "is a directory"));
    return std::nullopt;
  }
  if (size > kMaxSpecFileBytes) {
    diagnostics.error(spec::SourceLocation{path, 0, 0},
                      fmt::format("spec file is {} bytes; the limit is {} bytes (a spec is a few declarations)",
                                  size, kMaxSpecFileBytes));
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) {
    diagnostics.error(spec::SourceLocation{path, 0, 0}, "cannot read spec file");
    return std::nullopt;
  }
  sources.add(path, text.str());
  return parseSpec(text.str(), path, diagnostics);
}

}  // namespace cusync::dsl
