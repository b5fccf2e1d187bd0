// Def/use of one statement, computed on the Clang AST: which storage it reads and writes, whether it waits on a
// producer, and what makes it impossible to move (a "barrier").
//
// Storage is named, not addressed. A location is a root variable (a local, a parameter, a global, `this`) plus a
// path of member accesses and dereferences: `tile.row` is root `tile`, path `.row`; `Bs[i]` for a pointer `Bs` is
// root `Bs`, path `*`; `p->next->x` is root `p`, path `*.next*.x`. Arrays are one location (elements are not
// told apart). The analysis assumes that distinct root variables designate distinct memory, as `__restrict__`
// pointers do and as the operands of a tiled kernel (global A, B, shared As, Bs) do; taking a variable's address
// or binding a reference to it outside a call counts as reading and writing it.
//
// Calls: a call to a *wait function* (by name, default `wait`) reads its object and arguments and makes the data
// behind its pointer arguments visible (it writes them, for this analysis). Any other call is a barrier unless the
// callee is known: annotated `__attribute__((annotate("cusync_pure")))` or `__attribute__((const))` (reads only
// its argument values), annotated `__attribute__((annotate("cusync_args_only")))` (accesses memory only through
// its pointer/reference arguments and its object), named by the matching command-line option, a Clang builtin
// marked const, a libdevice `__nv_*` math function, or a function whose body is visible and whose inferred
// behaviour is one of the two (it only touches its parameters, its locals and read-only globals such as
// threadIdx). A function whose body calls a wait function makes its caller a waiting statement.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "clang/AST/ASTContext.h"
#include "clang/AST/Stmt.h"

#include "rewriter_options.h"

namespace cusync::tile_rewriter {

struct StorageLocation {
  enum class RootKind { Declaration, This, DependentName, Temporary };
  RootKind kind = RootKind::Declaration;
  const void* root = nullptr;  // canonical declaration, interned name or temporary expression, per `kind`
  std::string rootName;
  std::string path;            // sequence of `.member` and `*` components
  // Everything reachable from this location, through pointers too: what a view returned by a call on an object
  // (`tensor(_, k)`, `buffer.data()`) may designate.
  bool reachable = false;

  StorageLocation member(const std::string& name) const {
    return {kind, root, rootName, path + "." + name, reachable};
  }
  StorageLocation pointee() const { return {kind, root, rootName, path + "*", reachable}; }
  std::string spelling() const;  // C-like rendering for diagnostics: `tile.row`, `*Bs`, `p->x`
};

struct Access {
  StorageLocation location;
  clang::SourceLocation where;
};

// A write to `written` can change what a read of `read` observes.
bool writeAffectsRead(const StorageLocation& written, const StorageLocation& read);
// Two writes may touch the same storage.
bool writesOverlap(const StorageLocation& first, const StorageLocation& second);

struct Barrier {
  std::string reason;  // completes "it ...": "calls 'f', which has no visible definition"
  clang::SourceLocation where;
};

struct StatementEffects {
  std::vector<Access> reads;
  std::vector<Access> writes;
  std::vector<Barrier> barriers;
  // Variables the statement declares in the scope that encloses it (it is a declaration statement): moving it
  // moves them, and the statements it crosses come into their scope.
  std::vector<const clang::VarDecl*> declarations;
  // Variables declared in the statement's own inner scopes (a for-init, a block, a condition): they end with the
  // statement, so they neither collide with nor hide names of the statements it changes places with.
  std::set<const void*> innerDeclarations;                     // canonical declarations
  std::vector<std::pair<std::string, const void*>> namesUsed;  // every variable name referenced, with its decl
  std::optional<clang::SourceLocation> waitCall;              // first call that waits (directly or in a callee)
  // How many of the first `reads` happen before the first wait in every execution: those before a wait call that is
  // a whole statement on the statement's straight-line path, and the wait's own arguments. 0 when the first wait is
  // conditional, in a loop, inside an expression or in a callee: then every read may follow a wait.
  size_t readsBeforeWait = 0;
};

// How a callee behaves, for its callers.
enum class CalleeKind { Pure, ArgumentsOnly, Unknown };
struct CalleeSummary {
  CalleeKind kind = CalleeKind::Unknown;
  std::string why;     // for Unknown: completes "calls 'f', which ..."
  bool waits = false;  // its body calls a wait function
};

class AccessAnalyzer {
public:
  AccessAnalyzer(clang::ASTContext& context, const RewriterOptions& options) : context_(context), options_(options) {}

  StatementEffects analyze(const clang::Stmt* statement);

  // Summary of a resolved callee (memoized; recursion and deep call chains are Unknown).
  CalleeSummary summarize(const clang::FunctionDecl* function);
  // Summary of a callee known only by name (unresolved calls in templates) and its candidate declarations.
  CalleeSummary summarizeByName(const std::string& name, const std::vector<const clang::FunctionDecl*>& candidates);

  bool isWaitFunction(const std::string& name) const { return options_.waitFunctions.count(name) != 0; }
  const std::set<std::string>& waitFunctions() const { return options_.waitFunctions; }
  // The kind the command line gives a callee name (--pure-function, --args-only-function), if any.
  std::optional<CalleeKind> kindByName(const std::string& name) const {
    if (options_.pureFunctions.count(name)) return CalleeKind::Pure;
    if (options_.argsOnlyFunctions.count(name)) return CalleeKind::ArgumentsOnly;
    return std::nullopt;
  }
  const void* internName(const std::string& name) { return &*internedNames_.insert(name).first; }
  clang::ASTContext& context() { return context_; }

private:
  CalleeSummary inferFromBody(const clang::FunctionDecl* definition);

  clang::ASTContext& context_;
  const RewriterOptions& options_;
  std::map<const clang::FunctionDecl*, CalleeSummary> summaries_;
  std::set<const clang::FunctionDecl*> inProgress_;
  std::set<std::string> internedNames_;
};

}  // namespace cusync::tile_rewriter
