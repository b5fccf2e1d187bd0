// The emitted C++ computes what was proven: headers of random specs are compiled by the host compiler into a
// program that prints sem, value and order indices for every tile, compared with the proven index expressions.
#include "model_fixture.h"
#include "spec_builder.h"

#include <cusync/codegen/cpu_simulation.h>
#include <cusync/codegen/header_emitter.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace cusync;
using namespace cusync::policytest;

namespace {

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// The values the generator proved, keyed like the program's output lines: "name x y z" -> "a b".
void expectedValues(const Models& models, const codegen::Generation& generation,
                    std::map<std::string, std::string>& expected) {
  for (const codegen::PolicyResult* policy : generation.emittedPolicies()) {
    codegen::SimulatedTile extents = codegen::concreteExtents(*models.concrete, policy->candidate.producerGrid);
    for (std::int64_t z = 0; z < extents[2]; ++z)
      for (std::int64_t y = 0; y < extents[1]; ++y)
        for (std::int64_t x = 0; x < extents[0]; ++x) {
          std::int64_t tile[3] = {x, y, z};
          std::ostringstream key, value;
          key << policy->candidate.structName() << " " << x << " " << y << " " << z;
          value << codegen::evaluate(policy->functions.semaphore, tile, extents.data()) << " "
                << codegen::evaluate(policy->functions.value, tile, extents.data());
          expected[generation.specName + " " + key.str()] = value.str();
        }
  }
  for (const codegen::TileOrderResult* order : generation.emittedOrders()) {
    codegen::SimulatedTile extents = codegen::concreteExtents(*models.concrete, order->order.grid);
    for (std::int64_t z = 0; z < extents[2]; ++z)
      for (std::int64_t y = 0; y < extents[1]; ++y)
        for (std::int64_t x = 0; x < extents[0]; ++x) {
          std::int64_t tile[3] = {x, y, z};
          std::ostringstream key;
          key << generation.specName << " " << order->order.structName() << " " << x << " " << y << " " << z;
          expected[key.str()] = std::to_string(codegen::evaluate(order->order.index, tile, extents.data()));
        }
  }
}

// One function of the driver program: every policy and order of one spec on its concrete grids.
std::string driverFunction(const Models& models, const codegen::Generation& generation) {
  std::string id = codegen::specIdentifier(generation.specName), stem = "CUSYNC_" + upper(id);
  std::ostringstream out;
  out << "void dump_" << id << "() {\n  std::map<std::string, cusync::GridShape> grids{";
  for (const auto& grid : models.concrete->grids()) {
    codegen::SimulatedTile e = codegen::concreteExtents(*models.concrete, grid.grid.name);
    out << "{\"" << grid.grid.name << "\", {" << e[0] << "u, " << e[1] << "u, " << e[2] << "u}}, ";
  }
  out << "};\n"
      << "#define P(T, dependency, producer, consumer) dumpPolicy<T>(\"" << generation.specName
      << "\", grids.at(producer));\n"
      << "  " << stem << "_POLICIES(P)\n#undef P\n"
      << "#define O(T, grid) dumpOrder<T>(\"" << generation.specName << "\", grids.at(grid));\n"
      << "  " << stem << "_TILE_ORDERS(O)\n#undef O\n}\n";
  return out.str();
}

const char* kDriverPrelude = R"(#include <cstdio>
#include <map>
#include <string>
template <typename Policy> void dumpPolicy(const char* spec, cusync::GridShape grid) {
  for (unsigned z = 0; z < grid.z; ++z) for (unsigned y = 0; y < grid.y; ++y) for (unsigned x = 0; x < grid.x; ++x)
    std::printf("%s %s %u %u %u|%u %u\n", spec, Policy::name, x, y, z, Policy::sem({x, y, z}, grid),
                Policy::value({x, y, z}, grid));
}
template <typename Order> void dumpOrder(const char* spec, cusync::GridShape grid) {
  for (unsigned z = 0; z < grid.z; ++z) for (unsigned y = 0; y < grid.y; ++y) for (unsigned x = 0; x < grid.x; ++x)
    std::printf("%s %s %u %u %u|%u\n", spec, Order::name, x, y, z, Order::index({x, y, z}, grid));
}
)";

}  // namespace

TEST_CASE("Emitted headers of 40 random specs compute the proven functions on every tile", "[emitted]") {
  std::filesystem::path directory = std::filesystem::path(CUSYNC_POLICY_SCRATCH_DIR) / "emitted_code";
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  std::map<std::string, std::string> expected;
  std::ostringstream driver, calls;
  std::mt19937_64 random(7);
  for (int i = 0; i < 40; ++i) {
    spec::Spec spec = randomSpec(random, i);
    Models models = buildModels(spec);
    codegen::Generation generation = codegen::generate(models.proofModels(), {});
    std::ofstream(directory / codegen::headerFileName(generation)) << codegen::emitHeader(generation, "");
    driver << "#include \"" << codegen::headerFileName(generation) << "\"\n";
    expectedValues(models, generation, expected);
    calls << driverFunction(models, generation);
  }
  std::ofstream(directory / "driver.cpp") << driver.str() << kDriverPrelude << calls.str() << "int main() {\n"
                                          << [&] {
                                               std::string body;
                                               for (int i = 0; i < 40; ++i)
                                                 body += "  dump_random" + std::to_string(i) + "();\n";
                                               return body;
                                             }()
                                          << "}\n";
  std::string compile = std::string(CUSYNC_HOST_CXX) + " -std=c++17 -Wall -Wextra -Werror -I" +
                        CUSYNC_RUNTIME_INCLUDE_DIR + " -I" + directory.string() + " " +
                        (directory / "driver.cpp").string() + " -o " + (directory / "driver").string() + " 2> " +
                        (directory / "compile.log").string();
  INFO(compile);
  REQUIRE(std::system(compile.c_str()) == 0);
  std::string run = (directory / "driver").string() + " > " + (directory / "values.txt").string();
  REQUIRE(std::system(run.c_str()) == 0);

  std::ifstream values(directory / "values.txt");
  std::string line;
  std::size_t compared = 0;
  while (std::getline(values, line)) {
    auto bar = line.find('|');
    REQUIRE(bar != std::string::npos);
    auto it = expected.find(line.substr(0, bar));
    INFO(line);
    REQUIRE(it != expected.end());
    CHECK(it->second == line.substr(bar + 1));
    ++compared;
  }
  CHECK(compared == expected.size());
  CHECK(compared > 1000);
}
