#include "spec_test_support.h"

#include <cusync/dsl/parser.h>

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace cusync::test {

std::string sourcePath(const std::string& relative) { return std::string(CUSYNC_SOURCE_DIR) + "/" + relative; }

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

spec::Spec parseOrFail(const std::string& text, const std::string& file) {
  dsl::Diagnostics diagnostics;
  dsl::SourceTexts sources;
  sources.add(file, text);
  auto spec = dsl::parseSpec(text, file, diagnostics);
  INFO(dsl::render(diagnostics, sources));
  REQUIRE(spec.has_value());
  return *spec;
}

std::string parseErrors(const std::string& text, const std::string& file) {
  dsl::Diagnostics diagnostics;
  dsl::SourceTexts sources;
  sources.add(file, text);
  auto spec = dsl::parseSpec(text, file, diagnostics);
  if (spec) return {};
  return dsl::render(diagnostics, sources);
}

analysis::IslModel modelOrFail(const spec::Spec& spec, analysis::ModelOptions options) {
  dsl::Diagnostics diagnostics;
  auto model = analysis::IslModel::build(spec, options, diagnostics);
  INFO(dsl::render(diagnostics, dsl::SourceTexts{}));
  REQUIRE(model.has_value());
  return std::move(*model);
}

std::string modelErrors(const spec::Spec& spec, analysis::ModelOptions options) {
  dsl::Diagnostics diagnostics;
  auto model = analysis::IslModel::build(spec, options, diagnostics);
  if (model) return {};
  return dsl::render(diagnostics, dsl::SourceTexts{});
}

namespace {

void clear(spec::Expr& e) {
  e.location = {};
  for (auto& operand : e.operands) clear(operand);
}

void clear(spec::Tile& tile) {
  tile.location = {};
  for (auto& c : tile.coordinates) clear(c);
}

}  // namespace

void clearAnonymousLocations(spec::Spec& spec) {
  for (auto& p : spec.parameters) {
    for (auto& c : p.constraints) {
      c.location = {};
      clear(c.lhs);
      clear(c.rhs);
    }
  }
  for (auto& g : spec.grids) {
    for (auto& e : g.extents) clear(e);
  }
  for (auto& d : spec.dependencies) {
    clear(d.consumerTile);
    for (auto& p : d.producers) {
      p.location = {};
      for (auto& t : p.tiles) {
        t.location = {};
        clear(t.tile);
        for (auto& r : t.ranges) {
          r.range.location = {};
          clear(r.range.lower);
          clear(r.range.upper);
        }
      }
    }
  }
}

namespace {

// The process's folder for the files the tests write (spec files, cusyncgen's output). ctest runs every test case
// as its own process, so each process removes its folder when it exits; otherwise every run of the suite would
// leave hundreds of them in the temporary directory.
class ProcessTemporaryDirectory {
public:
  ProcessTemporaryDirectory()
      : path_(std::filesystem::temp_directory_path() / ("cusync-frontend-tests-" + std::to_string(getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~ProcessTemporaryDirectory() {
    std::error_code ignored;  // a destructor at exit has nobody to report to
    std::filesystem::remove_all(path_, ignored);
  }
  ProcessTemporaryDirectory(const ProcessTemporaryDirectory&) = delete;
  ProcessTemporaryDirectory& operator=(const ProcessTemporaryDirectory&) = delete;
  std::string path() const { return path_.string(); }

private:
  std::filesystem::path path_;
};

std::string temporaryDirectory() {
  static const ProcessTemporaryDirectory directory;
  return directory.path();
}

std::string shellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string writeTemporaryFile(const std::string& name, const std::string& contents) {
  std::string path = temporaryDirectory() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << contents;
  return path;
}

CommandResult runCusyncgen(const std::vector<std::string>& arguments) {
  static int counter = 0;
  std::string base = temporaryDirectory() + "/run" + std::to_string(++counter);
  std::string command = shellQuote(CUSYNCGEN_PATH);
  for (const auto& a : arguments) command += " " + shellQuote(a);
  command += " >" + shellQuote(base + ".out") + " 2>" + shellQuote(base + ".err");
  int status = std::system(command.c_str());
  CommandResult result;
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = readFile(base + ".out");
  result.err = readFile(base + ".err");
  return result;
}

}  // namespace cusync::test
