// Builds spec IR in tests without a front end: the paper's specs and random ones.
#pragma once

#include <cusync/dsl/spec.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace cusync::policytest {

inline spec::Expr num(std::int64_t value) {
  spec::Expr e;
  e.kind = spec::Expr::Kind::Constant;
  e.value = value;
  return e;
}
inline spec::Expr param(std::string name) {
  spec::Expr e;
  e.kind = spec::Expr::Kind::Parameter;
  e.name = std::move(name);
  return e;
}
inline spec::Expr dim(std::string name) {
  spec::Expr e;
  e.kind = spec::Expr::Kind::Dimension;
  e.name = std::move(name);
  return e;
}
inline spec::Expr extentOf(std::string grid, int dimension) {
  spec::Expr e;
  e.kind = spec::Expr::Kind::GridExtent;
  e.name = std::move(grid);
  e.dimensionIndex = dimension;
  return e;
}
inline spec::Expr binary(spec::Expr::Kind kind, spec::Expr a, spec::Expr b) {
  spec::Expr e;
  e.kind = kind;
  e.operands = {std::move(a), std::move(b)};
  return e;
}
inline spec::Expr operator+(spec::Expr a, spec::Expr b) { return binary(spec::Expr::Kind::Add, std::move(a), std::move(b)); }
inline spec::Expr operator*(spec::Expr a, spec::Expr b) { return binary(spec::Expr::Kind::Mul, std::move(a), std::move(b)); }
inline spec::Expr operator/(spec::Expr a, spec::Expr b) {
  return binary(spec::Expr::Kind::FloorDiv, std::move(a), std::move(b));
}

inline spec::Tile tile(std::vector<spec::Expr> coordinates) { return spec::Tile{std::move(coordinates), {}}; }

inline spec::TileSet tiles(spec::Tile t) { return spec::TileSet{std::move(t), {}, {}}; }
inline spec::TileSet forAll(spec::Tile t, std::string dimension, spec::Expr lower, spec::Expr upper) {
  spec::TileSet set{std::move(t), {}, {}};
  set.ranges.push_back({std::move(dimension), spec::Range{std::move(lower), std::move(upper), {}}});
  return set;
}

// The upper bound SpecBuilder gives every symbolic parameter.
inline constexpr std::int64_t kSymbolicBound = 1000;

struct SpecBuilder {
  spec::Spec spec;
  explicit SpecBuilder(std::string name) {
    spec.name = std::move(name);
    for (const char* d : {"x", "y", "z"}) spec.dimensions.push_back({d, {}});
  }
  SpecBuilder& parameter(std::string name, std::int64_t value, bool symbolic = false) {
    spec::Parameter p;
    p.name = name;
    p.defaultValue = value;
    p.symbolic = symbolic;
    // Symbolic parameters are bounded: grids must fit the runtime's 32-bit tile counts for every admissible value.
    if (symbolic) {
      p.constraints.push_back({param(name), spec::Constraint::Relation::GreaterEqual, num(1), {}});
      p.constraints.push_back({param(name), spec::Constraint::Relation::LessEqual, num(kSymbolicBound), {}});
    }
    spec.parameters.push_back(std::move(p));
    return *this;
  }
  SpecBuilder& grid(std::string name, std::vector<spec::Expr> extents) {
    static const char* names[] = {"x", "y", "z"};
    spec::Grid g;
    g.name = std::move(name);
    for (std::size_t i = 0; i < extents.size(); ++i) g.dimensions.push_back(names[i]);
    g.extents = std::move(extents);
    spec.grids.push_back(std::move(g));
    return *this;
  }
  // One producer per entry: (grid, tile sets).
  SpecBuilder& dependency(std::string name, std::string consumer, spec::Tile consumerTile,
                          std::vector<std::pair<std::string, std::vector<spec::TileSet>>> producers) {
    spec::Dependency d;
    d.name = std::move(name);
    d.consumerGrid = std::move(consumer);
    d.consumerTile = std::move(consumerTile);
    for (auto& [grid, sets] : producers) d.producers.push_back({grid, std::move(sets), {}});
    spec.dependencies.push_back(std::move(d));
    return *this;
  }
};

// The paper's Figure 5a: the GPT-3 MLP, B symbolic (rows of both GEMMs), H = 12288 split 8 ways.
inline spec::Spec mlpSpec() {
  SpecBuilder b("mlp");
  b.parameter("B", 4, true).parameter("S", 128).parameter("H", 12288).parameter("TileM", 128).parameter("TileN", 256);
  b.grid("g1", {num(4) * param("H") / (num(8) * param("TileN")), param("B") * param("S") / param("TileM")});
  b.grid("g2", {param("H") / param("TileN"), param("B") * param("S") / param("TileM")});
  b.dependency("dep", "g2", tile({dim("x"), dim("y")}),
               {{"g1", {forAll(tile({dim("x"), dim("y")}), "x", num(0), extentOf("g1", 0))}}});
  return b.spec;
}

// Figure 5b's first dependency: a dot-product tile reads the Q and K tiles of the QKV GEMM, H/(8*TileN) apart.
inline spec::Spec stridedSpec() {
  SpecBuilder b("strided");
  b.parameter("B", 2, true).parameter("H", 6144).parameter("TileN", 256);
  spec::Expr stride = param("H") / (num(8) * param("TileN"));
  b.grid("g1", {num(3) * stride, param("B")});
  b.grid("gP", {stride, param("B")});
  b.dependency("dep1P", "gP", tile({dim("x"), dim("y")}),
               {{"g1", {tiles(tile({dim("x"), dim("y")})), tiles(tile({dim("x") + stride, dim("y")}))}}});
  return b.spec;
}

// Figure 5c: chained implicit-GEMM convolutions; consumer tile x reads producer tile x*s.
inline spec::Spec convSpec() {
  SpecBuilder b("conv");
  b.parameter("B", 3, true).parameter("s", 2).parameter("C", 8);
  b.grid("g1", {param("C") * param("s"), param("B")});
  b.grid("g2", {param("C"), param("B")});
  b.dependency("dep", "g2", tile({dim("x"), dim("y")}), {{"g1", {tiles(tile({dim("x") * param("s"), dim("y")}))}}});
  return b.spec;
}

// Figure 5b as a chain of five kernels: QKV GEMM g1 -> dot product gP (Q and K, strided) -> gR (all rows of a
// column of gP) -> gT (gR and the V tiles of g1) -> second GEMM g2 (a whole row of gT).
inline spec::Spec attentionSpec() {
  SpecBuilder b("attention");
  b.parameter("B", 2, true).parameter("H", 4096).parameter("TileN", 128);
  spec::Expr stride = param("H") / (num(8) * param("TileN"));
  b.grid("g1", {num(3) * stride, param("B")});
  b.grid("gP", {stride, param("B")});
  b.grid("gR", {stride, num(1)});
  b.grid("gT", {stride, param("B")});
  b.grid("g2", {num(4), param("B")});
  spec::Tile xy = tile({dim("x"), dim("y")});
  b.dependency("dep1P", "gP", xy, {{"g1", {tiles(xy), tiles(tile({dim("x") + stride, dim("y")}))}}});
  b.dependency("depPR", "gR", xy, {{"gP", {forAll(xy, "y", num(0), extentOf("gP", 1))}}});
  b.dependency("depTR1", "gT", xy,
               {{"gR", {tiles(tile({dim("x"), num(0)}))}},
                {"g1", {tiles(tile({dim("x") + num(2) * stride, dim("y")}))}}});
  b.dependency("depT2", "g2", xy, {{"gT", {forAll(xy, "x", num(0), extentOf("gT", 0))}}});
  return b.spec;
}

// A consumer tile reads a block of 4 consecutive producer tiles: 4x, 4x+1, 4x+2, 4x+3.
inline spec::Spec blockSpec() {
  SpecBuilder b("block");
  b.parameter("B", 3, true);
  b.grid("g1", {num(16), param("B")});
  b.grid("g2", {num(4), param("B")});
  std::vector<spec::TileSet> sets;
  for (int i = 0; i < 4; ++i) sets.push_back(tiles(tile({num(4) * dim("x") + num(i), dim("y")})));
  b.dependency("dep", "g2", tile({dim("x"), dim("y")}), {{"g1", sets}});
  return b.spec;
}

// A random two- or three-stage spec with one of the dependency shapes the paper uses (and a few more); a third
// of them have a batch dimension z.
inline spec::Spec randomSpec(std::mt19937_64& random, int index) {
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(random() % static_cast<std::uint64_t>(hi - lo + 1)); };
  SpecBuilder b("random" + std::to_string(index));
  bool symbolicRows = pick(0, 1) == 1;
  int rows = pick(1, 4);
  b.parameter("B", rows, symbolicRows);
  bool batched = pick(0, 2) == 0;
  int batches = pick(1, 3);
  auto extents = [&](int width) {
    std::vector<spec::Expr> e{num(width), param("B")};
    if (batched) e.push_back(num(batches));
    return e;
  };
  auto at = [&](spec::Expr x, spec::Expr y) {
    std::vector<spec::Expr> c{std::move(x), std::move(y)};
    if (batched) c.push_back(dim("z"));
    return tile(std::move(c));
  };
  spec::Tile xy = at(dim("x"), dim("y"));
  int stages = pick(2, 3);
  int width = pick(1, 6);
  b.grid("g0", extents(width));
  for (int s = 1; s < stages; ++s) {
    std::string producer = "g" + std::to_string(s - 1), consumer = "g" + std::to_string(s);
    int shape = pick(0, batched ? 9 : 7);
    std::vector<spec::TileSet> sets;
    int consumerWidth = width;
    int producerWidth = width;
    switch (shape) {
      case 0:  // identity
        sets = {tiles(xy)};
        break;
      case 1:  // whole row (MLP)
        consumerWidth = pick(1, 5);
        sets = {forAll(xy, "x", num(0), extentOf(producer, 0))};
        break;
      case 2: {  // strided (QKV): the consumer is one stride wide
        int k = pick(2, 3);
        if (producerWidth < k) break;
        int stride = producerWidth / k;
        consumerWidth = stride;
        for (int i = 0; i < pick(2, k); ++i) sets.push_back(tiles(at(dim("x") + num(i * stride), dim("y"))));
        break;
      }
      case 3: {  // scaled (Conv2D)
        int scale = pick(2, 3);
        consumerWidth = (producerWidth + scale - 1) / scale;
        sets = {tiles(at(dim("x") * num(scale), dim("y")))};
        break;
      }
      case 4: {  // block of consecutive tiles
        int n = pick(2, 3);
        consumerWidth = producerWidth / n;
        if (consumerWidth == 0) break;
        for (int i = 0; i < n; ++i) sets.push_back(tiles(at(num(n) * dim("x") + num(i), dim("y"))));
        break;
      }
      case 5:  // whole column
        sets = {forAll(xy, "y", num(0), extentOf(producer, 1))};
        break;
      case 6:  // shifted neighbor and self (a stencil)
        if (producerWidth < 2) break;
        consumerWidth = producerWidth - 1;
        sets = {tiles(xy), tiles(at(dim("x") + num(1), dim("y")))};
        break;
      case 7:  // only row 0 of the producer
        sets = {tiles(at(dim("x"), num(0)))};
        break;
      case 8:  // every batch of the same (x, y)
        sets = {forAll(xy, "z", num(0), extentOf(producer, 2))};
        break;
      case 9: {  // whole rows of every batch: two ranged dimensions, so groupings combine across dimensions
        consumerWidth = pick(1, 4);
        spec::TileSet rowsOfAllBatches = forAll(xy, "x", num(0), extentOf(producer, 0));
        rowsOfAllBatches.ranges.push_back({"z", spec::Range{num(0), extentOf(producer, 2), {}}});
        sets = {rowsOfAllBatches};
        break;
      }
    }
    if (sets.empty()) {
      sets = {tiles(xy)};
      consumerWidth = producerWidth;
    }
    b.grid(consumer, extents(consumerWidth));
    b.dependency("dep" + std::to_string(s), consumer, xy, {{producer, sets}});
    width = consumerWidth;
  }
  return b.spec;
}

}  // namespace cusync::policytest
