// cusync-tile-rewriter's reordering judged by the legality rule itself (legality_oracle.h), not by golden files that
// were regenerated from the tool's own output: random groups of annotated statements with random read/write sets and
// waits (fixed seeds) are rendered as one CUDA file, rewritten by the real tool through its command line, and the
// order of the output is checked against the model the generator built. The golden cases' expected outputs are
// judged the same way, against access models written by hand next to them (cases/<name>.model). The oracle shares
// no code with the tool.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "case_model.h"
#include "group_rendering.h"
#include "legality_oracle.h"
#include "random_tile_load_groups.h"

using namespace cusync::rewriter_test;

namespace {

struct RewriteRun {
  int status = -1;
  std::string output;
  std::string diagnostics;
};

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A temporary directory that is removed with everything in it when the test leaves its scope.
class TemporaryDirectory {
public:
  TemporaryDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "cusync-legality-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

// Runs the rewriter (built next to this test, see CMakeLists.txt) on `source`.
RewriteRun rewrite(const std::string& source) {
  TemporaryDirectory directory;
  REQUIRE(!directory.path().empty());
  const std::filesystem::path input = directory.path() / "groups.cu";
  const std::filesystem::path output = directory.path() / "groups.rewritten.cu";
  const std::filesystem::path diagnostics = directory.path() / "diagnostics.txt";
  std::ofstream(input) << source;
  const std::string command = std::string("'") + CUSYNC_TILE_REWRITER_PATH + "' '" + input.string() + "' -o '" +
                              output.string() + "' 2> '" + diagnostics.string() + "'";
  RewriteRun run;
  const int status = std::system(command.c_str());
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.output = readFile(output);
  run.diagnostics = readFile(diagnostics);
  return run;
}

std::string describe(const ModelStatement& statement) {
  std::string text = statement.waits ? "wait(" + statement.waitArgument + "); " : "";
  for (const Operation& operation : statement.operations) text += operation.code + "; ";
  return text;
}

std::string describe(const ModelGroup& group, const std::vector<size_t>& order) {
  std::string text = "input:\n";
  for (size_t i = 0; i < group.statements.size(); ++i)
    text += "  " + std::to_string(i) + ": " + describe(group.statements[i]) + "\n";
  text += "output order:";
  for (size_t index : order) text += " " + std::to_string(index);
  return text;
}

// Rewrites `groups` and checks every group's output order; returns how many groups the rewriter changed.
size_t checkRewrite(const std::vector<ModelGroup>& groups) {
  const std::string source = renderKernels(groups);
  const RewriteRun run = rewrite(source);
  INFO("rewriter diagnostics:\n" << run.diagnostics);
  REQUIRE(run.status == 0);
  const auto orders = statementOrderByGroup(run.output);
  const auto inputLines = sortedLinesByGroup(source);
  const auto outputLines = sortedLinesByGroup(run.output);
  size_t changed = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<size_t> order = orders.count(g) ? orders.at(g) : std::vector<size_t>{};
    INFO("group " << g << "\n" << describe(groups[g], order));
    // The text of the kernel is the input's, lines only reordered.
    CHECK(outputLines.count(g) == 1);
    if (outputLines.count(g)) CHECK(outputLines.at(g) == inputLines.at(g));
    const std::vector<std::string> violations = legalityViolations(groups[g], order);
    for (const std::string& violation : violations) FAIL_CHECK(violation);
    if (!violations.empty()) continue;
    // Every freely hoistable statement ends above every waiting statement.
    std::vector<size_t> position(order.size());
    for (size_t p = 0; p < order.size(); ++p) position[order[p]] = p;
    for (size_t free : freelyHoistableStatements(groups[g]))
      for (size_t waiting = 0; waiting < groups[g].statements.size(); ++waiting)
        if (groups[g].statements[waiting].waits && position[free] > position[waiting])
          FAIL_CHECK("statement " << free << " depends on nothing before it but stays below waiting statement "
                                  << waiting);
    for (size_t p = 0; p < order.size(); ++p)
      if (order[p] != p) {
        ++changed;
        break;
      }
  }
  return changed;
}

ModelStatement waitThenLoad(const std::string& waitArgument, std::set<std::string> waitArgumentReads,
                            std::vector<Operation> operations) {
  return {true, waitArgument, std::move(waitArgumentReads), std::move(operations)};
}
ModelStatement load(Operation operation) { return {false, "", {}, {std::move(operation)}}; }

}  // namespace

TEST_CASE("the oracle rejects a read of guarded memory hoisted above its wait and a broken dependence",
          "[rewriter][legality]") {
  ModelGroup group;
  group.globalMemory = {"A", "B"};
  group.statements = {waitThenLoad("k / kTileK", {}, {{"loadTile(As, A, k, kTileK)", {"A"}, {"As"}}}),
                      load({"loadTile(Ds, A, k, kTileK)", {"A"}, {"Ds"}}),
                      load({"loadTile(Bs, B, k, kTileK)", {"B"}, {"Bs"}}),
                      load({"x = As[threadIdx.x]", {"As"}, {"x"}})};
  CHECK(legalityViolations(group, {2, 0, 1, 3}).empty());
  CHECK(legalityViolations(group, {1, 2, 0, 3}).size() == 1);  // the second read of A above the wait
  CHECK(legalityViolations(group, {3, 0, 1, 2}).size() == 1);  // x = As[...] above the load of As
  CHECK(!legalityViolations(group, {0, 1, 2}).empty());        // a statement lost
  CHECK(!legalityViolations(group, {0, 1, 2, 2}).empty());     // a statement duplicated
  CHECK(freelyHoistableStatements(group) == std::vector<size_t>{2});
  // Memory the wait's argument reads is read before the wait: not guarded.
  ModelGroup orderRead;
  orderRead.globalMemory = {"order"};
  orderRead.statements = {waitThenLoad("order[k]", {"order"}, {{"x = float(order[k])", {"order"}, {"x"}}}),
                          load({"y = float(order[k])", {"order"}, {"y"}})};
  CHECK(legalityViolations(orderRead, {1, 0}).empty());
}

TEST_CASE("the rewriter keeps a second read of a produced tile below the wait and hoists the weights",
          "[rewriter][legality]") {
  ModelGroup group;
  group.globalMemory = {"A", "B"};
  group.statements = {waitThenLoad("k / kTileK", {}, {{"loadTile(As, A, k, kTileK)", {"A"}, {"As"}}}),
                      load({"loadTile(Ds, A, k, kTileK)", {"A"}, {"Ds"}}),
                      load({"loadTile(Bs, B, k, kTileK)", {"B"}, {"Bs"}})};
  CHECK(checkRewrite({group}) == 1);
}

TEST_CASE("the rewriter's order of random tile-load groups is legal and hoists every free load",
          "[rewriter][legality][property]") {
  for (unsigned seed : {1u, 2u}) {
    INFO("seed " << seed);
    std::mt19937 random(seed);
    std::vector<ModelGroup> groups;
    for (int i = 0; i < 200; ++i) groups.push_back(randomGroup(random));
    // Not vacuous: a good share of the groups must actually change.
    CHECK(checkRewrite(groups) >= groups.size() / 10);
  }
}

TEST_CASE("the expected output of every modelled golden case orders its statements legally", "[rewriter][legality]") {
  size_t modelledCases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(CUSYNC_REWRITER_CASES_DIR)) {
    if (entry.path().extension() != ".model") continue;
    ++modelledCases;
    const std::filesystem::path input = std::filesystem::path(entry.path()).replace_extension(".cu");
    std::filesystem::path expected = std::filesystem::path(entry.path()).replace_extension(".expected.cu");
    if (!std::filesystem::exists(expected)) expected = input;  // REWRITER-EXPECT: unchanged
    INFO("case " << input.filename().string());
    const CaseModel model = parseCaseModel(readFile(entry.path()));
    REQUIRE(model.error.empty());
    REQUIRE(!model.groups.empty());
    const std::vector<std::string> inputLines = splitLines(readFile(input));
    const std::vector<std::string> outputLines = splitLines(readFile(expected));
    for (size_t g = 0; g < model.groups.size(); ++g) {
      const std::vector<size_t> order = outputOrder(model.groups[g], inputLines, outputLines);
      INFO("group " << g << " (input lines " << model.groups[g].lines.front().first << "-"
                    << model.groups[g].lines.back().last << ")\n"
                    << describe(model.groups[g].model, order));
      for (const std::string& violation : legalityViolations(model.groups[g].model, order)) FAIL_CHECK(violation);
    }
  }
  CHECK(modelledCases >= 8);
}
