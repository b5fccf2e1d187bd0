#include "random_dep_spec.h"

#include <algorithm>
#include <set>
#include <vector>

namespace cusync::oracle {
namespace {

// An extent as n*N + b*B + c (N and B the symbolic parameters).
struct Extent {
  int n = 0, b = 0, c = 1;
  bool constant() const { return n == 0 && b == 0; }
  int minimum() const { return 2 * n + b + c; }  // at N = 2, B = 1
  friend bool operator==(const Extent&, const Extent&) = default;
  std::string text() const {
    std::string out;
    auto term = [&](int k, const char* name) {
      if (k == 0) return;
      out += (out.empty() ? "" : " + ") + (k == 1 ? std::string(name) : std::to_string(k) + "*" + name);
    };
    term(n, "N");
    term(b, "B");
    if (c != 0 || out.empty()) out += out.empty() ? std::to_string(c) : (c > 0 ? " + " : " - ") + std::to_string(std::abs(c));
    return out;
  }
};

struct GridShape3 {
  Extent x, y, z;  // z.c == 1 and constant for 2-D specs
};

class Generator {
 public:
  explicit Generator(std::mt19937_64& random) : random_(random) {}

  RandomSpec generate() {
    batched_ = pick(0, 2) == 0;
    int grids = pick(2, 5);
    addGrid(rootShape());
    for (int g = 1; g < grids; ++g) addConsumer(g);
    RandomSpec spec;
    spec.features = features_;
    spec.text = "Symbolic N = " + std::to_string(pick(2, 5)) + ", B = " + std::to_string(pick(1, 3)) + ";\n" +
                "Where(N >= 2, N <= 5, B >= 1, B <= 3);\n" + "Dim x, y, z;\n" + grids_ + dependencies_;
    return spec;
  }

 private:
  int pick(int low, int high) { return low + static_cast<int>(random_() % static_cast<std::uint64_t>(high - low + 1)); }

  Extent randomExtent(bool allowN, bool allowB) {
    int kind = pick(0, 3);
    if (kind == 0 && allowN) return {1, 0, pick(-1, 1)};
    if (kind == 1 && allowB) return {0, 1, 0};
    return {0, 0, pick(1, 6)};
  }

  GridShape3 rootShape() {
    GridShape3 s{randomExtent(true, false), randomExtent(false, true), {0, 0, 1}};
    if (batched_) s.z = {0, 0, pick(1, 3)};
    return s;
  }

  std::string tile(const std::string& x, const std::string& y) const {
    return "Tile(" + x + ", " + y + (batched_ ? ", z)" : ")");
  }

  void addGrid(const GridShape3& s) {
    std::string name = "g" + std::to_string(shapes_.size());
    grids_ += "Grid " + name + "(x, y" + (batched_ ? ", z" : "") + ", " + s.x.text() + ", " + s.y.text() +
              (batched_ ? ", " + s.z.text() : "") + ");\n";
    shapes_.push_back(s);
  }

  // A producer read with its consumer's shape: the tile sets, and the consumer shape they need.
  struct Read {
    std::string tiles;
    GridShape3 consumer;
    std::string feature;
  };

  // A read of producer p whose consumer shape is free to choose.
  Read freeRead(int p) {
    const GridShape3& P = shapes_[p];
    std::string g = "g" + std::to_string(p);
    GridShape3 C = P;
    for (int attempt = 0; attempt < 8; ++attempt) {
      switch (pick(0, 12)) {
        case 0: return {tile("x", "y"), C, "identity"};
        case 1:
          if (batched_) break;
          return {tile("y", "x"), {P.y, P.x, P.z}, "transpose"};
        case 2:
          C.x = {0, 0, pick(1, 4)};
          return {"ForAll(" + tile("x", "y") + ", x, Range(" + g + ".x))", C, "whole row"};
        case 3:
          C.y = {0, 0, pick(1, 3)};
          return {"ForAll(" + tile("x", "y") + ", y, Range(" + g + ".y))", C, "whole column"};
        case 4: {  // strided: reads x, x + S, ..., the producer width W = k*S + r
          if (!P.x.constant()) break;
          int s = pick(2, 3), k = P.x.c / s;
          if (k < 2) break;
          int reads = pick(2, k);
          C.x = {0, 0, s};
          std::string tiles;
          for (int i = 0; i < reads; ++i) tiles += (i ? ", " : "") + tile("x + " + std::to_string(i * s), "y");
          return {tiles, C, P.x.c % s != 0 ? "stride remainder" : "strided"};
        }
        case 5: {  // Conv2D: x*s
          if (!P.x.constant()) break;
          int s = pick(2, 3);
          C.x = {0, 0, (P.x.c + s - 1) / s};
          return {tile("x*" + std::to_string(s), "y"), C, "scaled"};
        }
        case 6: {  // block of n consecutive tiles, the last block of the producer possibly unread
          if (!P.x.constant()) break;
          int n = pick(2, 3);
          if (P.x.c < n) break;
          C.x = {0, 0, P.x.c / n};
          std::string tiles;
          for (int i = 0; i < n; ++i) tiles += (i ? ", " : "") + tile(std::to_string(n) + "*x + " + std::to_string(i), "y");
          return {tiles, C, P.x.c % n != 0 ? "block remainder" : "block"};
        }
        case 7:  // stencil: x and x + 1
          if (P.x.minimum() < 2) break;
          C.x = P.x;
          --C.x.c;
          return {tile("x", "y") + ", " + tile("x + 1", "y"), C, "stencil"};
        case 8:
          C.y = {0, 0, pick(1, 3)};
          return {tile("x", "0"), C, "row 0"};
        case 9:
          if (!batched_) break;
          return {"ForAll(" + tile("x", "y") + ", z, Range(" + g + ".z))", C, "whole batch"};
        case 11: {  // a block of n tiles through a range that moves with the consumer: Range(n*x, n*x + n)
          if (!P.x.constant()) break;
          int n = pick(2, 3);
          if (P.x.c < n) break;
          C.x = {0, 0, P.x.c / n};
          std::string from = std::to_string(n) + "*x";
          return {"ForAll(" + tile("x", "y") + ", x, Range(" + from + ", " + from + " + " + std::to_string(n) + "))", C,
                  "range from x"};
        }
        case 12: {  // a halo of h rows each side, clipped to the grid with max and min (a convolution's)
          std::string h = std::to_string(pick(1, 2));
          return {"ForAll(" + tile("x", "y") + ", y, Range(max(0, y - " + h + "), min(" + g + ".y, y + " + h + " + 1)))",
                  C, "clipped halo"};
        }
        case 10:
          C.x = {0, 0, pick(1, 3)};
          return {"ForAll(ForAll(" + tile("x", "y") + ", x, Range(" + g + ".x)), y, Range(" + g + ".y))", C,
                  "everything"};
      }
    }
    return {tile("x", "y"), P, "identity"};
  }

  // A read of producer p by a consumer whose shape is already fixed.
  std::string fixedRead(int p, const GridShape3& C) {
    const GridShape3& P = shapes_[p];
    std::string g = "g" + std::to_string(p);
    std::vector<std::string> options;
    if (P.x == C.x && P.y == C.y) options.push_back(tile("x", "y"));
    if (!batched_ && P.x == C.y && P.y == C.x) options.push_back(tile("y", "x"));
    if (P.y == C.y) options.push_back("ForAll(" + tile("x", "y") + ", x, Range(" + g + ".x))");
    if (P.x == C.x) options.push_back("ForAll(" + tile("x", "y") + ", y, Range(" + g + ".y))");
    if (P.x == C.x) options.push_back(tile("x", "0"));
    if (P.y == C.y) options.push_back(tile("0", "y"));
    options.push_back(tile("0", "0"));
    return options[static_cast<std::size_t>(pick(0, static_cast<int>(options.size()) - 1))];
  }

  void addConsumer(int g) {
    // The first producer decides the consumer's shape; a second one (a diamond when both share an ancestor)
    // is read in a way that fits it.
    int first = pick(0, g - 1);
    Read read = freeRead(first);
    ++features_[read.feature];
    if (read.consumer.x.n != 0) ++features_["symbolic x"];
    std::string producers = "{g" + std::to_string(first) + ", " + read.tiles + "}";
    std::vector<int> readFrom{first};
    if (g >= 2 && pick(0, 1) == 1) {
      int second = pick(0, g - 2);
      if (second >= first) ++second;
      producers += ", {g" + std::to_string(second) + ", " + fixedRead(second, read.consumer) + "}";
      readFrom.push_back(second);
    }
    for (int p : readFrom) {
      for (int other : consumersOf_[p])
        if (std::find(readFrom.begin(), readFrom.end(), other) == readFrom.end()) {
          // another consumer already reads p: a fan-out, and a diamond if that consumer shares another ancestor
          ++features_["fan-out"];
        }
      consumersOf_[p].push_back(g);
    }
    if (readFrom.size() == 2 && sharesAncestor(readFrom[0], readFrom[1])) ++features_["diamond"];
    ancestors_[g] = {};
    for (int p : readFrom) {
      ancestors_[g].insert(p);
      ancestors_[g].insert(ancestors_[p].begin(), ancestors_[p].end());
    }
    addGrid(read.consumer);
    dependencies_ += "Dep d" + std::to_string(g) + "({g" + std::to_string(g) + ", " + tile("x", "y") + "}, " +
                     producers + ");\n";
  }

  bool sharesAncestor(int a, int b) {
    std::set<int> left = ancestors_[a], right = ancestors_[b];
    left.insert(a);
    right.insert(b);
    for (int g : left)
      if (right.count(g)) return true;
    return false;
  }

  std::mt19937_64& random_;
  bool batched_ = false;
  std::vector<GridShape3> shapes_;
  std::map<int, std::vector<int>> consumersOf_;
  std::map<int, std::set<int>> ancestors_;
  std::string grids_, dependencies_;
  std::map<std::string, int> features_;
};

}  // namespace

RandomSpec randomDepSpec(std::mt19937_64& random) { return Generator(random).generate(); }

}  // namespace cusync::oracle
