#include "guarded_memory.h"

#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"

namespace cusync::tile_rewriter {
namespace {

// A read before the wait of the same storage (or, for a view, of a view at least as wide) shows the thread reads it
// without this wait.
bool readBefore(const Access& read, const std::vector<Access>& readsBeforeWait) {
  for (const Access& before : readsBeforeWait)
    if (before.location.root == read.location.root && before.location.path == read.location.path &&
        (before.location.reachable || !read.location.reachable))
      return true;
  return false;
}

}  // namespace

bool mayHoldProducedData(const StorageLocation& location) {
  using RootKind = StorageLocation::RootKind;
  if (location.kind == RootKind::Temporary) return false;
  if (location.reachable || location.path.find('*') != std::string::npos) return true;
  if (location.kind != RootKind::Declaration) return true;  // `this`, dependent names
  const auto* variable = llvm::dyn_cast<clang::VarDecl>(static_cast<const clang::Decl*>(location.root));
  if (variable == nullptr) return true;  // structured bindings, captured fields: may be references
  if (variable->getType()->isReferenceType()) return true;
  if (variable->hasAttr<clang::CUDASharedAttr>()) return false;
  if (variable->hasLocalStorage()) return false;
  return !variable->getType().isConstQualified();  // threadIdx, constants: nobody writes them
}

std::vector<Access> guardedReads(const StatementEffects& waiting) {
  std::vector<Access> guarded;
  if (!waiting.waitCall) return guarded;
  const std::vector<Access> before(waiting.reads.begin(),
                                   waiting.reads.begin() + std::ptrdiff_t(waiting.readsBeforeWait));
  for (size_t i = waiting.readsBeforeWait; i < waiting.reads.size(); ++i) {
    const Access& read = waiting.reads[i];
    if (mayHoldProducedData(read.location) && !readBefore(read, before)) guarded.push_back(read);
  }
  return guarded;
}

}  // namespace cusync::tile_rewriter
