#include "tile_load_group_model.h"

namespace cusync::rewriter_test {

std::set<std::string> ModelStatement::reads() const {
  std::set<std::string> all = waitArgumentReads;
  for (const Operation& operation : operations) all.insert(operation.reads.begin(), operation.reads.end());
  return all;
}

std::set<std::string> ModelStatement::writes() const {
  std::set<std::string> all;
  for (const Operation& operation : operations) all.insert(operation.writes.begin(), operation.writes.end());
  return all;
}

std::set<std::string> ModelStatement::guarded(const std::set<std::string>& globalMemory) const {
  std::set<std::string> guardedMemory;
  if (!waits) return guardedMemory;
  for (const Operation& operation : operations)
    for (const std::string& name : operation.reads)
      if (globalMemory.count(name) && !waitArgumentReads.count(name)) guardedMemory.insert(name);
  return guardedMemory;
}

}  // namespace cusync::rewriter_test
