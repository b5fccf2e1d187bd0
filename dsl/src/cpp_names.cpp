#include <cusync/dsl/cpp_names.h>

#include <algorithm>
#include <cctype>

namespace cusync::dsl {
namespace {

// Sorted, for binary search.
constexpr std::string_view kKeywords[] = {
    "alignas",   "alignof",      "and",        "and_eq",       "asm",          "auto",        "bitand",
    "bitor",     "bool",         "break",      "case",         "catch",        "char",        "char16_t",
    "char32_t",  "char8_t",      "class",      "co_await",     "co_return",    "co_yield",    "compl",
    "concept",   "const",        "const_cast", "consteval",    "constexpr",    "constinit",   "continue",
    "decltype",  "default",      "delete",     "do",           "double",       "dynamic_cast", "else",
    "enum",      "explicit",     "export",     "extern",       "false",        "float",       "for",
    "friend",    "goto",         "if",         "inline",       "int",          "long",        "mutable",
    "namespace", "new",          "noexcept",   "not",          "not_eq",       "nullptr",     "operator",
    "or",        "or_eq",        "private",    "protected",    "public",       "register",    "reinterpret_cast",
    "requires",  "return",       "short",      "signed",       "sizeof",       "static",      "static_assert",
    "static_cast", "struct",     "switch",     "template",     "this",         "thread_local", "throw",
    "true",      "try",          "typedef",    "typeid",       "typename",     "union",       "unsigned",
    "using",     "virtual",      "void",       "volatile",     "wchar_t",      "while",       "xor",
    "xor_eq"};

}  // namespace

bool isCppKeyword(std::string_view name) {
  return std::binary_search(std::begin(kKeywords), std::end(kKeywords), name);
}

std::optional<std::string> unusableCppName(std::string_view name) {
  if (isCppKeyword(name)) return std::string("it is a C++ keyword");
  if (name.find("__") != std::string_view::npos || (name.size() >= 2 && name[0] == '_' &&
                                                   std::isupper(static_cast<unsigned char>(name[1]))))
    return std::string("C++ reserves it for the implementation (a double underscore, or _ and a capital letter)");
  if (name.rfind("CUSYNC_", 0) == 0) return std::string("names starting with CUSYNC_ are the runtime's macros");
  return std::nullopt;
}

}  // namespace cusync::dsl
