#include "header_reading.h"

#include <sstream>
#include <stdexcept>

namespace cusync::oracle {
namespace {

// The quoted strings and the type of one X-macro line `  X(ns::Type, "a", "b", "c") \`.
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  auto open = line.find("X(");
  auto comma = line.find(',', open);
  std::string type = line.substr(open + 2, comma - open - 2);
  out.push_back(type.substr(type.rfind("::") + 2));
  for (auto quote = line.find('"', comma); quote != std::string::npos; quote = line.find('"', quote + 1)) {
    auto end = line.find('"', quote + 1);
    out.push_back(line.substr(quote + 1, end - quote - 1));
    quote = end;
  }
  return out;
}

// Whether the comment block right above `struct NAME {` says the proof holds symbolically.
bool provenSymbolically(const std::string& text, const std::string& structName) {
  auto at = text.find("\nstruct " + structName + " {");
  if (at == std::string::npos) throw std::runtime_error("oracle: no struct " + structName + " in the header");
  auto proof = text.rfind("// Proven with isl ", at);
  auto previous = text.rfind("\n};", at);
  if (proof == std::string::npos || (previous != std::string::npos && proof < previous))
    throw std::runtime_error("oracle: struct " + structName + " has no proof comment");
  return text.compare(proof, 31, "// Proven with isl symbolically") == 0;
}

}  // namespace

EmittedHeader readHeader(const std::string& text) {
  EmittedHeader header;
  std::istringstream lines(text);
  std::string line, list;
  while (std::getline(lines, line)) {
    if (line.rfind("#define CUSYNC_", 0) == 0) {
      std::string name = line.substr(8, line.find('(') - 8);
      auto endsWith = [&](const std::string& tail) {
        return name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
      };
      auto suffix = name.rfind("_POLICIES");
      if (endsWith("_PRODUCER_POLICIES")) {
        list = "producer policies";
      } else if (endsWith("_POLICIES")) {
        header.macroStem = name.substr(0, suffix);
        list = "policies";
      } else {
        list = name.size() > 12 && name.compare(name.size() - 12, 12, "_TILE_ORDERS") == 0 ? "orders" : "";
      }
      continue;
    }
    if (line.rfind("  X(", 0) != 0) {
      list.clear();
      continue;
    }
    std::vector<std::string> f = fields(line);
    if (list == "policies" && f.size() == 4)
      header.policies.push_back({f[0], f[1], f[2], f[3], provenSymbolically(text, f[0])});
    else if (list == "producer policies" && f.size() == 3) {
      std::vector<std::string> dependencies;
      std::istringstream words(f[2]);
      for (std::string word; words >> word;) dependencies.push_back(word);
      header.producerPolicies.push_back({f[0], f[1], dependencies, provenSymbolically(text, f[0])});
    } else if (list == "orders" && f.size() == 2)
      header.orders.push_back({f[0], f[1], provenSymbolically(text, f[0])});
  }
  return header;
}

}  // namespace cusync::oracle
