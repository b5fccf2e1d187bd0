// Names that cannot name a declaration of a spec: every declared name also appears in C++ (a .dep file compiles
// against the embedded DSL, and the generated header uses parameter names as constants and grid names as function
// parameters), so a name must be a usable C++ identifier there. Host-only header.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cusync::dsl {

// C++20 keywords and alternative tokens (`and`, `not`, ...).
bool isCppKeyword(std::string_view name);

// Why `name` cannot name a declaration ("it is a C++ keyword", ...), or nullopt when it can: C++ keywords,
// identifiers C++ reserves for the implementation (a double underscore anywhere, or an underscore and a capital
// letter first), and the runtime's macro prefix CUSYNC_ (a macro would replace the name in the header).
std::optional<std::string> unusableCppName(std::string_view name);

}  // namespace cusync::dsl
