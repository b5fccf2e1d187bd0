#include <cusync/dsl/dsl.h>

#include "name_recovery.h"

#include <fmt/format.h>

#include <stdexcept>

namespace cusync::dsl {
namespace {

thread_local SpecRecorder* innermostRecorder = nullptr;

spec::Expr binaryExpr(spec::Expr::Kind kind, const Term& a, const Term& b) {
  spec::Expr e;
  e.kind = kind;
  e.operands = {a.expr(), b.expr()};
  return e;
}

Comparison compare(spec::Constraint::Relation relation, const Term& a, const Term& b) {
  spec::Constraint constraint;
  constraint.lhs = a.expr();
  constraint.relation = relation;
  constraint.rhs = b.expr();
  return Comparison(std::move(constraint));
}

spec::Expr named(spec::Expr::Kind kind, const std::string& name) {
  spec::Expr e;
  e.kind = kind;
  e.name = name;
  return e;
}

// The name of the declaration at `where`, recorded into the current spec's diagnostics when it cannot be read.
std::string declaredName(const std::source_location& where, spec::SourceLocation& location) {
  std::string name;
  location = SpecRecorder::current().locate(where, name);
  return name;
}

void attachConstraint(const Comparison& comparison, const std::source_location& where) {
  SpecRecorder& recorder = SpecRecorder::current();
  auto& parameters = recorder.mutableSpec().parameters;
  // Same rule as the parser: the latest-declared symbolic parameter the constraint mentions.
  std::optional<std::size_t> owner;
  auto visit = [&](auto&& self, const spec::Expr& e) -> void {
    if (e.kind == spec::Expr::Kind::Parameter) {
      for (std::size_t i = 0; i < parameters.size(); ++i) {
        if (parameters[i].name == e.name && parameters[i].symbolic && (!owner || i > *owner)) owner = i;
      }
    }
    for (const auto& operand : e.operands) self(self, operand);
  };
  visit(visit, comparison.constraint().lhs);
  visit(visit, comparison.constraint().rhs);
  if (!owner) {
    recorder.mutableDiagnostics().error(
        spec::SourceLocation{where.file_name(), static_cast<int>(where.line()), static_cast<int>(where.column())},
        "this constraint mentions no symbolic parameter (declare one with Symbolic)");
    return;
  }
  parameters[*owner].constraints.push_back(comparison.constraint());
}

}  // namespace

SpecRecorder::SpecRecorder(std::string specName) : enclosing_(innermostRecorder) {
  spec_.name = std::move(specName);
  innermostRecorder = this;
}

SpecRecorder::~SpecRecorder() { innermostRecorder = enclosing_; }

SpecRecorder& SpecRecorder::current() {
  if (innermostRecorder == nullptr) {
    throw std::logic_error("cusync::dsl: declarations need a live SpecRecorder to record into");
  }
  return *innermostRecorder;
}

spec::SourceLocation SpecRecorder::locate(const std::source_location& where, std::string& name) {
  if (auto recovered = detail::recoverDeclaredName(where)) {
    name = recovered->name;
    return recovered->location;
  }
  spec::SourceLocation location{where.file_name(), static_cast<int>(where.line()), static_cast<int>(where.column())};
  name = fmt::format("unnamed_{}_{}", where.line(), where.column());
  diagnostics_.error(location, "cannot read this declaration's name back from its source file");
  return location;
}

Term::Term(std::int64_t constant) {
  expr_.kind = spec::Expr::Kind::Constant;
  expr_.value = constant;
}

Term operator+(const Term& a, const Term& b) { return Term(binaryExpr(spec::Expr::Kind::Add, a, b)); }
Term operator-(const Term& a, const Term& b) { return Term(binaryExpr(spec::Expr::Kind::Sub, a, b)); }
Term operator*(const Term& a, const Term& b) { return Term(binaryExpr(spec::Expr::Kind::Mul, a, b)); }
Term operator/(const Term& a, const Term& b) { return Term(binaryExpr(spec::Expr::Kind::FloorDiv, a, b)); }
Term operator%(const Term& a, const Term& b) { return Term(binaryExpr(spec::Expr::Kind::Mod, a, b)); }
Term min(const Term& a, const Term& b) { return Term(binaryExpr(spec::Expr::Kind::Min, a, b)); }
Term max(const Term& a, const Term& b) { return Term(binaryExpr(spec::Expr::Kind::Max, a, b)); }
Term operator+(const Term& a) { return a; }
Term operator-(const Term& a) {
  spec::Expr e;
  e.kind = spec::Expr::Kind::Neg;
  e.operands = {a.expr()};
  return Term(std::move(e));
}

Comparison operator<(const Term& a, const Term& b) { return compare(spec::Constraint::Relation::Less, a, b); }
Comparison operator<=(const Term& a, const Term& b) { return compare(spec::Constraint::Relation::LessEqual, a, b); }
Comparison operator==(const Term& a, const Term& b) { return compare(spec::Constraint::Relation::Equal, a, b); }
Comparison operator>=(const Term& a, const Term& b) {
  return compare(spec::Constraint::Relation::GreaterEqual, a, b);
}
Comparison operator>(const Term& a, const Term& b) { return compare(spec::Constraint::Relation::Greater, a, b); }

Param::Param(std::int64_t defaultValue, std::source_location where) : Param(defaultValue, false, where) {}

Param::Param(std::int64_t defaultValue, bool symbolic, std::source_location where) {
  spec::Parameter parameter;
  parameter.name = declaredName(where, parameter.location);
  parameter.defaultValue = defaultValue;
  parameter.symbolic = symbolic;
  name_ = parameter.name;
  SpecRecorder::current().mutableSpec().parameters.push_back(std::move(parameter));
}

Param::operator Term() const { return Term(named(spec::Expr::Kind::Parameter, name_)); }

Symbolic::Symbolic(std::int64_t defaultValue, std::source_location where) : Param(defaultValue, true, where) {}

void Where(const Comparison& c1, std::source_location where) { attachConstraint(c1, where); }
void Where(const Comparison& c1, const Comparison& c2, std::source_location where) {
  for (const auto* c : {&c1, &c2}) attachConstraint(*c, where);
}
void Where(const Comparison& c1, const Comparison& c2, const Comparison& c3, std::source_location where) {
  for (const auto* c : {&c1, &c2, &c3}) attachConstraint(*c, where);
}
void Where(const Comparison& c1, const Comparison& c2, const Comparison& c3, const Comparison& c4,
           std::source_location where) {
  for (const auto* c : {&c1, &c2, &c3, &c4}) attachConstraint(*c, where);
}

Dim::Dim(std::source_location where) {
  spec::Dimension dimension;
  dimension.name = declaredName(where, dimension.location);
  name_ = dimension.name;
  SpecRecorder::current().mutableSpec().dimensions.push_back(std::move(dimension));
}

Dim::operator Term() const { return Term(named(spec::Expr::Kind::Dimension, name_)); }

Grid::Grid(const Dim& d0, const Term& e0, std::source_location where) { record({&d0}, {e0}, where); }
Grid::Grid(const Dim& d0, const Dim& d1, const Term& e0, const Term& e1, std::source_location where) {
  record({&d0, &d1}, {e0, e1}, where);
}
Grid::Grid(const Dim& d0, const Dim& d1, const Dim& d2, const Term& e0, const Term& e1, const Term& e2,
           std::source_location where) {
  record({&d0, &d1, &d2}, {e0, e1, e2}, where);
}

void Grid::record(std::vector<const Dim*> dimensions, std::vector<Term> extents, const std::source_location& where) {
  spec::Grid grid;
  grid.name = declaredName(where, grid.location);
  for (const Dim* dimension : dimensions) grid.dimensions.push_back(dimension->name());
  for (const Term& extent : extents) grid.extents.push_back(extent.expr());
  name_ = grid.name;
  Term* members[] = {&x, &y, &z};
  for (int i = 0; i < 3; ++i) {
    spec::Expr extent = named(spec::Expr::Kind::GridExtent, name_);
    extent.dimensionIndex = i;
    *members[i] = Term(std::move(extent));
  }
  SpecRecorder::current().mutableSpec().grids.push_back(std::move(grid));
}

Tile::Tile(const Term& c0, std::source_location) { tile_.coordinates = {c0.expr()}; }
Tile::Tile(const Term& c0, const Term& c1, std::source_location) { tile_.coordinates = {c0.expr(), c1.expr()}; }
Tile::Tile(const Term& c0, const Term& c1, const Term& c2, std::source_location) {
  tile_.coordinates = {c0.expr(), c1.expr(), c2.expr()};
}

Range::Range(const Term& upper) : Range(Term(0), upper) {}
Range::Range(const Term& lower, const Term& upper) {
  range_.lower = lower.expr();
  range_.upper = upper.expr();
}

TileSetArgument::TileSetArgument(const Tile& tile) : present_(true) { set_.tile = tile.tile(); }
TileSetArgument::TileSetArgument(const ForAll& forAll) : set_(forAll.tileSet()), present_(true) {}

ForAll::ForAll(const TileSetArgument& tiles, const Dim& dimension, const Range& range, std::source_location)
    : set_(tiles.tileSet()) {
  set_.ranges.push_back({dimension.name(), range.range()});
}

ConsumerTile::ConsumerTile(const Grid& grid, const Tile& tile) : grid_(grid.name()), tile_(tile.tile()) {}

ProducerTiles::ProducerTiles(const Grid& grid, const TileSetArgument& t0, const TileSetArgument& t1,
                             const TileSetArgument& t2, const TileSetArgument& t3, const TileSetArgument& t4,
                             const TileSetArgument& t5, const TileSetArgument& t6, const TileSetArgument& t7) {
  producer_.grid = grid.name();
  for (const auto* t : {&t0, &t1, &t2, &t3, &t4, &t5, &t6, &t7}) {
    if (t->present()) producer_.tiles.push_back(t->tileSet());
  }
}

Dep::Dep(const ConsumerTile& consumer, const ProducerTiles& p0, const ProducerTiles& p1, const ProducerTiles& p2,
         const ProducerTiles& p3, std::source_location where) {
  spec::Dependency dependency;
  dependency.name = declaredName(where, dependency.location);
  dependency.consumerGrid = consumer.grid();
  dependency.consumerTile = consumer.tile();
  for (const auto* p : {&p0, &p1, &p2, &p3}) {
    if (p->present()) dependency.producers.push_back(p->producer());
  }
  name_ = dependency.name;
  SpecRecorder::current().mutableSpec().dependencies.push_back(std::move(dependency));
}

}  // namespace cusync::dsl
