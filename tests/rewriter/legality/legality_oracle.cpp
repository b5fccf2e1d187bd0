#include "legality_oracle.h"

#include <algorithm>

namespace cusync::rewriter_test {
namespace {

bool intersects(const std::set<std::string>& first, const std::set<std::string>& second) {
  return std::any_of(first.begin(), first.end(), [&](const std::string& name) { return second.count(name) != 0; });
}

// Why `later` must stay after `earlier` (both in input order), or empty when they may change places.
std::string orderingReason(const ModelGroup& group, const ModelStatement& earlier, const ModelStatement& later) {
  if (intersects(earlier.writes(), later.reads())) return "it reads what the earlier one writes (RAW)";
  if (intersects(earlier.reads(), later.writes())) return "it writes what the earlier one reads (WAR)";
  if (intersects(earlier.writes(), later.writes())) return "both write the same memory (WAW)";
  if (intersects(earlier.guarded(group.globalMemory), later.reads()))
    return "it reads memory the earlier one's wait guards";
  return "";
}

}  // namespace

std::vector<std::string> legalityViolations(const ModelGroup& group, const std::vector<size_t>& outputOrder) {
  std::vector<std::string> violations;
  const size_t count = group.statements.size();
  std::vector<size_t> sorted = outputOrder;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < std::max(count, sorted.size()); ++i)
    if (i >= sorted.size() || i >= count || sorted[i] != i) {
      violations.push_back("the output is not a permutation of the " + std::to_string(count) + " input statements");
      return violations;
    }
  std::vector<size_t> position(count);
  for (size_t p = 0; p < count; ++p) position[outputOrder[p]] = p;
  for (size_t earlier = 0; earlier < count; ++earlier)
    for (size_t later = earlier + 1; later < count; ++later) {
      const std::string reason = orderingReason(group, group.statements[earlier], group.statements[later]);
      if (!reason.empty() && position[later] < position[earlier])
        violations.push_back("statement " + std::to_string(later) + " was moved above statement " +
                             std::to_string(earlier) + ", but " + reason);
    }
  return violations;
}

std::vector<size_t> freelyHoistableStatements(const ModelGroup& group) {
  std::vector<size_t> hoistable;
  bool afterWait = false;
  for (size_t later = 0; later < group.statements.size(); ++later) {
    const ModelStatement& statement = group.statements[later];
    bool independent = !statement.waits && afterWait;
    for (size_t earlier = 0; earlier < later && independent; ++earlier)
      independent = orderingReason(group, group.statements[earlier], statement).empty();
    if (independent) hoistable.push_back(later);
    afterWait = afterWait || statement.waits;
  }
  return hoistable;
}

}  // namespace cusync::rewriter_test
