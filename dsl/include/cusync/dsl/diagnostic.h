// Diagnostics: errors as values with a source location, rendered compiler-style by the tools.
//
// Libraries (parser, analysis) never print or exit; they append Diagnostics and the command decides what to do.
// Rendering: `file:line:col: error: message`, then the source line and a caret under the column, then notes.
#pragma once

#include <cusync/dsl/spec.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cusync::dsl {

enum class Severity { Error, Warning };

struct Diagnostic {
  Severity severity = Severity::Error;
  spec::SourceLocation location;  // line 0 means "no location" (e.g. a command-line -D value)
  std::string message;
  std::vector<std::string> notes;  // printed as `note: ...` lines after the caret
};

class Diagnostics {
 public:
  Diagnostic& error(spec::SourceLocation location, std::string message);
  Diagnostic& warning(spec::SourceLocation location, std::string message);

  bool hasErrors() const;
  std::size_t errorCount() const;
  const std::vector<Diagnostic>& all() const { return diagnostics_; }

  // Stops runaway error cascades (e.g. on binary garbage): after this many errors, further ones are dropped and
  // one "too many errors" diagnostic is kept.
  static constexpr std::size_t kMaxErrors = 20;

 private:
  std::vector<Diagnostic> diagnostics_;
  bool truncated_ = false;
};

// The texts of source files by name, to print the offending line under a diagnostic.
class SourceTexts {
 public:
  void add(std::string file, std::string text);
  // The 1-based line of `file`, without its newline; empty if unknown.
  std::string_view line(std::string_view file, int line) const;

 private:
  std::map<std::string, std::string, std::less<>> texts_;
};

// Renders one diagnostic (with source line and caret when the text is known) as it is printed to stderr.
std::string render(const Diagnostic& diagnostic, const SourceTexts& sources);
std::string render(const Diagnostics& diagnostics, const SourceTexts& sources);

}  // namespace cusync::dsl
