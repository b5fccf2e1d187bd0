#include "case_model.h"

#include <algorithm>
#include <sstream>

namespace cusync::rewriter_test {
namespace {

bool parseStatement(std::istringstream& words, const std::string& range, CaseGroup& group, std::string& error) {
  LineRange lines;
  const size_t dash = range.find('-');
  try {
    lines.first = std::stoul(range.substr(0, dash));
    lines.last = dash == std::string::npos ? lines.first : std::stoul(range.substr(dash + 1));
  } catch (const std::exception&) {
    error = "expected a line range, got '" + range + "'";
    return false;
  }
  ModelStatement statement;
  Operation accesses;
  std::set<std::string>* list = nullptr;
  for (std::string word; words >> word;) {
    if (word == "wait") {
      statement.waits = true;
      list = nullptr;
    } else if (word == "before") {
      list = &statement.waitArgumentReads;
    } else if (word == "reads") {
      list = &accesses.reads;
    } else if (word == "writes") {
      list = &accesses.writes;
    } else if (list != nullptr) {
      list->insert(word);
    } else {
      error = "unexpected '" + word + "'";
      return false;
    }
  }
  statement.operations.push_back(std::move(accesses));
  group.model.statements.push_back(std::move(statement));
  group.lines.push_back(lines);
  return true;
}

}  // namespace

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

CaseModel parseCaseModel(const std::string& text) {
  CaseModel model;
  const std::vector<std::string> lines = splitLines(text);
  for (size_t number = 1; number <= lines.size(); ++number) {
    std::istringstream words(lines[number - 1].substr(0, lines[number - 1].find('#')));
    std::string first;
    if (!(words >> first)) continue;
    if (first == "group") {
      model.groups.emplace_back();
      for (std::string name; words >> name;) model.groups.back().model.globalMemory.insert(name);
      continue;
    }
    std::string error = model.groups.empty() ? "a statement before the first 'group'" : "";
    if (error.empty()) parseStatement(words, first, model.groups.back(), error);
    if (!error.empty()) {
      model.error = "line " + std::to_string(number) + ": " + error;
      return model;
    }
  }
  return model;
}

std::vector<size_t> outputOrder(const CaseGroup& group, const std::vector<std::string>& input,
                                const std::vector<std::string>& output) {
  size_t spanFirst = ~size_t(0), spanLast = 0;
  for (const LineRange& range : group.lines) {
    spanFirst = std::min(spanFirst, range.first);
    spanLast = std::max(spanLast, range.last);
  }
  std::vector<std::pair<size_t, size_t>> found;  // (output line, statement)
  std::vector<bool> taken(output.size() + 1, false);
  for (size_t statement = 0; statement < group.lines.size(); ++statement) {
    const LineRange& range = group.lines[statement];
    if (range.first == 0 || range.last < range.first || range.last > input.size()) continue;
    const size_t length = range.last - range.first + 1;
    for (size_t start = spanFirst; start + length - 1 <= std::min(spanLast, output.size()); ++start) {
      bool matches = !taken[start];
      for (size_t i = 0; i < length && matches; ++i) matches = output[start + i - 1] == input[range.first + i - 1];
      if (!matches) continue;
      for (size_t i = 0; i < length; ++i) taken[start + i] = true;
      found.emplace_back(start, statement);
      break;
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<size_t> order;
  for (const auto& [line, statement] : found) order.push_back(statement);
  return order;
}

}  // namespace cusync::rewriter_test
