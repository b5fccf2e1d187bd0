#include "load_reordering.h"

#include <optional>
#include <utility>

#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"

#include "guarded_memory.h"

namespace cusync::tile_rewriter {
namespace {

struct Load {
  Load(const AnnotatedStatement* annotated, StatementEffects effects)
      : annotated(annotated), effects(std::move(effects)), guarded(guardedReads(this->effects)) {}
  const AnnotatedStatement* annotated;
  StatementEffects effects;
  std::vector<Access> guarded;  // for a waiting load: what it reads after its wait that the wait may guard
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
  // A read of memory that the crossed wait may guard must stay after it, whether or not the moving load waits too.
  for (const Access& guarded : crossed.guarded)
    for (const Access& read : moving.effects.reads)
      if (writeAffectsRead(guarded.location, read.location)) {
        finding.message = "it reads '" + read.location.spelling() + "', which " + crossedName +
                          " reads after its wait (memory the wait may guard)";
        finding.noteWhere = guarded.where;
        finding.note = "'" + guarded.location.spelling() + "' is read here, after the wait";
        return finding;
      }
  // Moving a declaration up puts the statements it crosses into its scope. A name the crossed statement declares
  // in its own inner scope shadows the moved one there, as it shadowed the outer one before: same meaning.
  for (const clang::VarDecl* declared : moving.effects.declarations)
    for (const auto& [name, decl] : crossed.effects.namesUsed)
      if (name == declared->getNameAsString() && decl != declared->getCanonicalDecl() &&
          !crossed.effects.innerDeclarations.count(decl)) {
        finding.message = "it declares '" + name + "', which would hide the '" + name + "' used by " + crossedName;
        finding.noteWhere = static_cast<const clang::Decl*>(decl)->getLocation();
        finding.note = "the hidden '" + name + "' is declared here";
        return finding;
      }
  return std::nullopt;
}

bool isBlockBarrier(const clang::Stmt* statement) {
  const auto* expression = llvm::dyn_cast<clang::Expr>(statement);
  if (expression == nullptr) return false;
  const auto* call = llvm::dyn_cast<clang::CallExpr>(expression->IgnoreImplicit()->IgnoreParens());
  const clang::FunctionDecl* callee = call ? call->getDirectCallee() : nullptr;
  if (callee == nullptr || callee->getIdentifier() == nullptr) return false;
  const llvm::StringRef name = callee->getName();
  return name == "__syncthreads" || name == "__syncthreads_count" || name == "__syncthreads_and" ||
         name == "__syncthreads_or";
}

bool isSharedVariable(const StorageLocation& location) {
  if (location.kind != StorageLocation::RootKind::Declaration) return false;
  const auto* variable = llvm::dyn_cast<clang::VarDecl>(static_cast<const clang::Decl*>(location.root));
  return variable != nullptr && variable->hasAttr<clang::CUDASharedAttr>();
}

// A load that moves above a wait also moves above the block barrier a block-level wait contains (the
// `__syncthreads()` in cusync::blockWait). If the load writes a __shared__ variable, that barrier may have been what
// kept the write from racing with other threads' accesses to it before the group: the statements of the block
// before the group and, in a loop body, those after it (they run before the group's next execution). The move is
// safe when an explicit __syncthreads() statement lies between the closest such access and the group.
class SharedMemoryHazards {
public:
  SharedMemoryHazards(const TileLoadGroup& group, AccessAnalyzer& analyzer) {
    // In execution order before the group: the statements after it (previous iteration), then those before it.
    if (group.blockIsLoopBody)
      for (const clang::Stmt* statement : group.after) precedingGroup_.push_back(statement);
    for (const clang::Stmt* statement : group.before) precedingGroup_.push_back(statement);
    for (const clang::Stmt* statement : precedingGroup_)
      effects_.push_back(isBlockBarrier(statement) ? StatementEffects{} : analyzer.analyze(statement));
  }

  std::optional<ReorderFinding> check(const Load& moving, const clang::SourceManager& sources) const {
    for (const Access& write : moving.effects.writes) {
      if (!isSharedVariable(write.location)) continue;
      for (size_t i = precedingGroup_.size(); i-- > 0;) {
        if (isBlockBarrier(precedingGroup_[i])) break;
        std::optional<Access> touch;
        for (const Access& read : effects_[i].reads)
          if (!touch && writeAffectsRead(write.location, read.location)) touch = read;
        for (const Access& other : effects_[i].writes)
          if (!touch && writesOverlap(write.location, other.location)) touch = other;
        if (!touch) continue;
        ReorderFinding finding;
        finding.message = "it writes __shared__ '" + write.location.spelling() + "', which line " +
                          std::to_string(sources.getExpansionLineNumber(touch->where)) +
                          " accesses with no __syncthreads() in between; above the wait's block barrier the write "
                          "could race with that access";
        finding.noteWhere = touch->where;
        finding.note = "'" + touch->location.spelling() + "' is accessed here";
        return finding;
      }
    }
    return std::nullopt;
  }

private:
  std::vector<const clang::Stmt*> precedingGroup_;
  std::vector<StatementEffects> effects_;
};

std::string describe(const Load& load, const clang::SourceManager& sources) {
  const unsigned line = sources.getExpansionLineNumber(load.annotated->statement->getBeginLoc());
  return std::string(load.waits() ? "the waiting load" : "the tile load") + " at line " + std::to_string(line);
}

// Reorders one run of movable loads; returns their new order (indices into `loads`).
std::vector<size_t> reorderRun(const std::vector<Load>& loads, const SharedMemoryHazards& hazards,
                               const clang::SourceManager& sources, std::vector<ReorderFinding>& findings) {
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
    std::optional<size_t> firstWaiting;
    for (size_t position = insertion; position < order.size() && !conflict; ++position) {
      blocker = order[position];
      conflict = firstConflict(loads[i], loads[blocker], loads[blocker].waits() ? "that waiting load" : "that load");
      if (!firstWaiting && loads[blocker].waits()) firstWaiting = blocker;
    }
    if (!conflict && firstWaiting) {
      conflict = hazards.check(loads[i], sources);
      blocker = *firstWaiting;
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

// A group in which nothing waits has nothing to reorder; most likely its wait is called by a name the tool does not
// know, which the user should hear about rather than get the file back unchanged.
std::optional<ReorderFinding> groupWithoutWait(const TileLoadGroup& group, AccessAnalyzer& analyzer) {
  for (const AnnotatedStatement& annotated : group.statements)
    if (analyzer.analyze(annotated.statement).waitCall) return std::nullopt;
  std::string names;
  for (const std::string& name : analyzer.waitFunctions()) names += (names.empty() ? "'" : ", '") + name + "'";
  ReorderFinding finding;
  finding.where = group.statements.front().pragmaLocation;
  finding.message = "#pragma tile: no load of this group waits, so nothing is reordered: none calls a wait function (" +
                    names + "), directly or through a function whose body does; name yours with --wait-function";
  return finding;
}

}  // namespace

ReorderPlan planReordering(const std::vector<TileLoadGroup>& groups, AccessAnalyzer& analyzer,
                           const clang::SourceManager& sources) {
  ReorderPlan plan;
  for (const TileLoadGroup& group : groups) {
    if (std::optional<ReorderFinding> finding = groupWithoutWait(group, analyzer)) {
      plan.findings.push_back(*finding);
      continue;
    }
    const SharedMemoryHazards hazards(group, analyzer);
    // A statement whose text cannot move splits the group: loads never cross it.
    std::vector<Load> run;
    auto finishRun = [&] {
      if (run.size() >= 2) {
        std::vector<size_t> order = reorderRun(run, hazards, sources, plan.findings);
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
