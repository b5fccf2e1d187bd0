// Which statement each `#pragma tile` annotates, and the straight-line groups the reordering works on.
//
// A pragma annotates the statement of a block (`{ ... }`) that follows it. A *group* is a maximal run of two or
// more consecutive annotated statements of one block: nothing unannotated lies between them, so only annotated
// tile loads ever change places. The text that moves with a statement (its *chunk*) is whole lines: from the line
// after the previous statement to the end of the statement's own line, i.e. its `#pragma tile`, any other pragmas
// and comments before it, the statement, and a comment trailing it.
#pragma once

#include <string>
#include <vector>

#include "clang/AST/ASTContext.h"
#include "clang/AST/Stmt.h"

#include "tile_pragma.h"

namespace cusync::tile_rewriter {

struct AnnotatedStatement {
  const clang::Stmt* statement = nullptr;
  clang::SourceLocation pragmaLocation;
  unsigned chunkBegin = 0;  // main-file offsets of the chunk, a line start ...
  unsigned chunkEnd = 0;    // ... and the start of the line after the statement
  std::string notMovable;   // why the chunk cannot be moved as text (macro, shared line, #if between); empty if it can
};

struct TileLoadGroup {
  std::vector<AnnotatedStatement> statements;  // in source order
  // Where the group sits: its block, the block's statements before and after it, and whether the block is a loop
  // body (then the statements after the group run again before the group's next execution).
  const clang::CompoundStmt* block = nullptr;
  std::vector<const clang::Stmt*> before;
  std::vector<const clang::Stmt*> after;
  bool blockIsLoopBody = false;
};

struct PragmaProblem {
  enum class Kind { NothingFollows, OutsideFunction, FromMacro };
  Kind kind;
  clang::SourceLocation where;
};

struct AnnotationScan {
  std::vector<TileLoadGroup> groups;
  std::vector<PragmaProblem> problems;
  unsigned mainFilePragmas = 0;  // `#pragma tile` directives written in the main file
};

AnnotationScan findAnnotatedStatements(clang::ASTContext& context, const std::vector<TilePragma>& pragmas);

}  // namespace cusync::tile_rewriter
