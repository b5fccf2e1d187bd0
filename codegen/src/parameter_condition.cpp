#include <cusync/codegen/parameter_condition.h>

#include <isl/set.h>

#include <cstdlib>

namespace cusync::codegen {

std::string parameterCondition(const isl::set& parameters) {
  isl::set set = parameters.coalesce();
  if (set.is_empty()) return "no value";
  char* printed = isl_set_to_str(set.get());
  std::string text = printed ? printed : "";
  free(printed);
  // isl prints "[P] -> { : c1; : c2 }" (or "{ [] : c }" on a zero-dimensional set space).
  auto open = text.find('{'), close = text.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return text;
  std::string body = text.substr(open + 1, close - open - 1), condition;
  std::size_t start = 0;
  while (start <= body.size()) {
    std::size_t end = body.find(';', start);
    std::string part = body.substr(start, end == std::string::npos ? std::string::npos : end - start);
    auto colon = part.find(':');
    part = colon == std::string::npos ? "" : part.substr(colon + 1);
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    if (part.empty()) return "any value";  // a disjunct without constraints: the universe
    condition += (condition.empty() ? "" : " or ") + part;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return condition;
}

}  // namespace cusync::codegen
