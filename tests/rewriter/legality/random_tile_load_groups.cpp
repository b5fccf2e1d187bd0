#include "random_tile_load_groups.h"

#include <array>
#include <string>

namespace cusync::rewriter_test {
namespace {

const std::array<const char*, 3> kTiles = {"A", "B", "D"};
const std::array<const char*, 3> kSharedTiles = {"As", "Bs", "Ds"};
const std::array<const char*, 3> kLocals = {"x", "y", "z"};

template <class Array>
std::string pick(const Array& names, std::mt19937& random) {
  return names[std::uniform_int_distribution<size_t>(0, names.size() - 1)(random)];
}

Operation randomOperation(std::mt19937& random) {
  const std::string tile = pick(kTiles, random);
  const std::string shared = pick(kSharedTiles, random);
  const std::string local = pick(kLocals, random);
  const std::string otherLocal = pick(kLocals, random);
  switch (std::uniform_int_distribution<int>(0, 7)(random)) {
    case 0:
    case 1: return {"loadTile(" + shared + ", " + tile + ", k, kTileK)", {tile}, {shared}};
    case 2: return {local + " = " + tile + "[k + threadIdx.x]", {tile}, {local}};
    case 3: return {local + " = float(order[k])", {"order"}, {local}};
    case 4: return {local + " = " + shared + "[threadIdx.x]", {shared}, {local}};
    case 5: return {shared + "[threadIdx.x] = " + local, {local}, {shared}};
    case 6: return {local + " += " + otherLocal, {local, otherLocal}, {local}};
    default:
      if (std::bernoulli_distribution(0.5)(random)) return {"out[threadIdx.x] = " + local, {local}, {"out"}};
      return {local + " = out[threadIdx.x]", {"out"}, {local}};
  }
}

ModelStatement randomStatement(std::mt19937& random) {
  ModelStatement statement;
  statement.waits = std::bernoulli_distribution(0.35)(random);
  if (statement.waits) {
    switch (std::uniform_int_distribution<int>(0, 2)(random)) {
      case 0: statement.waitArgument = "k / kTileK"; break;
      case 1:
        statement.waitArgument = "order[k]";
        statement.waitArgumentReads = {"order"};
        break;
      default: {
        const std::string local = pick(kLocals, random);
        statement.waitArgument = "int(" + local + ")";
        statement.waitArgumentReads = {local};
      }
    }
  }
  const int operations = std::uniform_int_distribution<int>(1, 2)(random);
  for (int i = 0; i < operations; ++i) statement.operations.push_back(randomOperation(random));
  return statement;
}

}  // namespace

ModelGroup randomGroup(std::mt19937& random) {
  ModelGroup group;
  group.globalMemory = {"A", "B", "D", "order", "out"};
  const int statements = std::uniform_int_distribution<int>(2, 6)(random);
  for (int i = 0; i < statements; ++i) group.statements.push_back(randomStatement(random));
  return group;
}

}  // namespace cusync::rewriter_test
