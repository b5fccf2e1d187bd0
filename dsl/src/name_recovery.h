// Reads the name of a C++ declaration back from its source file, for the embedded DSL.
#pragma once

#include <cusync/dsl/spec.h>

#include <optional>
#include <source_location>
#include <string>

namespace cusync::dsl::detail {

struct RecoveredName {
  std::string name;
  spec::SourceLocation location;  // of the name token, as the .dep parser records it
};

// `where` is a std::source_location captured by a declaration's constructor. Compilers point it at different parts
// of the declaration (GCC: the initializer of `Param H = 1`, the name in `Dim x`, the closing ')' of `Grid g(...)`),
// so this lexes the file and walks back over balanced parentheses to the start of the declarator: the token after
// the nearest ',', ';', brace or declaration keyword at nesting depth 0. Files are read once and cached.
std::optional<RecoveredName> recoverDeclaredName(const std::source_location& where);

}  // namespace cusync::dsl::detail
