#include "load_reordering.h"

#include <optional>

namespace cusync::tile_rewriter {
namespace {

struct Load {
  const AnnotatedStatement* annotated;
  StatementEffects effects;
  bool waits() const { return effects.waitCall.has_value(); }
};

// Why `moving` may not be issued before `crossed`, which it currently follows; nothing if it may.
std::optional<ReorderFinding> firstConflict(const Load& moving, const Load& crossed, const std::string& crossedName) {
  ReorderFinding finding;
  if (!moving.effects.barriers.empty()) {
    const Barrier& barrier = moving.effects.barriers.front();
    finding.message = "it " + barrier.reason;
    finding.noteWhere = barrier.where;
    finding.note = "here";
    return finding;
  }
  if (!crossed.effects.barriers.empty()) {
    const Barrier& barrier = crossed.effects.barriers.front();
    finding.message = crossedName + " " + barrier.reason;
    finding.noteWhere = barrier.where;
    finding.note = "here";
    return finding;
  }
  for (const Access& written : crossed.effects.writes) {
    for (const Access& read : moving.effects.reads)
      if (writeAffectsRead(written.location, read.location)) {
        finding.message = "it reads '" + read.location.spelling() + "', which " + crossedName + " writes";
        finding.noteWhere = written.where;
        finding.note = "'" + written.location.spelling() + "' is written here";
        return finding;
      }
    for (const Access& write : moving.effects.writes)
      if (writesOverlap(written.location, write.location)) {
        finding.message = "it writes '" + write.location.spelling() + "', which " + crossedName + " also writes";
        finding.noteWhere = written.where;
        finding.note = "'" + written.location.spelling() + "' is written here";
        return finding;
      }
  }
  for (const Access& write : moving.effects.writes)
    for (const Access& read : crossed.effects.reads)
      if (writeAffectsRead(write.location, read.location)) {
        finding.message = "it writes '" + write.location.spelling() + "', which " + crossedName + " reads";
        finding.noteWhere = read.where;
        finding.note = "'" + read.location.spelling() + "' is read here";
        return finding;
      }
  // Moving a declaration up puts the statements it crosses into its scope.
  for (const clang::VarDecl* declared : moving.effects.declarations)
    for (const auto& [name, decl] : crossed.effects.namesUsed)
      if (name == declared->getNameAsString() && decl != declared->getCanonicalDecl()) {
        finding.message = "it declares '" + name + "', which would hide the '" + name + "' used by " + crossedName;
        finding.noteWhere = static_cast<const clang::Decl*>(decl)->getLocation();
        finding.note = "the hidden '" + name + "' is declared here";
        return finding;
      }
  return std::nullopt;
}

std::string describe(const Load& load, const clang::SourceManager& sources) {
  const unsigned line = sources.getExpansionLineNumber(load.annotated->statement->getBeginLoc());
  return std::string(load.waits() ? "the waiting load" : "the tile load") + " at line " + std::to_string(line);
}

// Reorders one run of movable loads; returns their new order (indices into `loads`).
std::vector<size_t> reorderRun(const std::vector<Load>& loads, const clang::SourceManager& sources,
                               std::vector<ReorderFinding>& findings) {
  std::vector<size_t> order;
  size_t insertion = 0;  // loads before this position in `order` need no wait (or were hoisted)
  for (size_t i = 0; i < loads.size(); ++i) {
    if (loads[i].waits() || insertion == order.size()) {
      order.push_back(i);
      if (!loads[i].waits()) insertion = order.size();
      continue;
    }
    std::optional<ReorderFinding> conflict;
    size_t blocker = 0;
    for (size_t position = insertion; position < order.size() && !conflict; ++position) {
      blocker = order[position];
      conflict = firstConflict(loads[i], loads[blocker], loads[blocker].waits() ? "that waiting load" : "that load");
    }
    if (!conflict) {
      order.insert(order.begin() + std::ptrdiff_t(insertion), i);
      ++insertion;
      continue;
    }
    conflict->where = loads[i].annotated->statement->getBeginLoc();
    conflict->message = "#pragma tile: this load stays below " + describe(loads[blocker], sources) + ": " +
                        conflict->message;
    findings.push_back(*conflict);
    order.push_back(i);
  }
  return order;
}

}  // namespace

ReorderPlan planReordering(const std::vector<TileLoadGroup>& groups, AccessAnalyzer& analyzer,
                           const clang::SourceManager& sources) {
  ReorderPlan plan;
  for (const TileLoadGroup& group : groups) {
    // A statement whose text cannot move splits the group: loads never cross it.
    std::vector<Load> run;
    auto finishRun = [&] {
      if (run.size() >= 2) {
        std::vector<size_t> order = reorderRun(run, sources, plan.findings);
        bool changed = false;
        for (size_t i = 0; i < order.size(); ++i) changed = changed || order[i] != i;
        if (changed) {
          Reordering reordering;
          reordering.begin = run.front().annotated->chunkBegin;
          reordering.end = run.back().annotated->chunkEnd;
          for (size_t index : order)
            reordering.chunks.emplace_back(run[index].annotated->chunkBegin, run[index].annotated->chunkEnd);
          plan.reorderings.push_back(std::move(reordering));
        }
      }
      run.clear();
    };
    for (const AnnotatedStatement& annotated : group.statements) {
      if (!annotated.notMovable.empty()) {
        finishRun();
        plan.findings.push_back({annotated.statement->getBeginLoc(),
                                 "#pragma tile: this statement is not reordered: " + annotated.notMovable, {}, ""});
        continue;
      }
      run.push_back({&annotated, analyzer.analyze(annotated.statement)});
    }
    finishRun();
  }
  return plan;
}

}  // namespace cusync::tile_rewriter
