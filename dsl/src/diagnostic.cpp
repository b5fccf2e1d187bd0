#include <cusync/dsl/diagnostic.h>

#include <fmt/format.h>

namespace cusync::dsl {

Diagnostic& Diagnostics::error(spec::SourceLocation location, std::string message) {
  if (errorCount() >= kMaxErrors) {
    // Keep the first errors (the useful ones) and say once that the rest were dropped.
    if (!truncated_) {
      truncated_ = true;
      diagnostics_.push_back({Severity::Error, {}, fmt::format("too many errors; stopping after {}", kMaxErrors), {}});
    }
    static thread_local Diagnostic dropped;
    dropped = {};
    return dropped;
  }
  diagnostics_.push_back({Severity::Error, std::move(location), std::move(message), {}});
  return diagnostics_.back();
}

Diagnostic& Diagnostics::warning(spec::SourceLocation location, std::string message) {
  diagnostics_.push_back({Severity::Warning, std::move(location), std::move(message), {}});
  return diagnostics_.back();
}

bool Diagnostics::hasErrors() const { return errorCount() > 0; }

std::size_t Diagnostics::errorCount() const {
  std::size_t count = 0;
  for (const auto& d : diagnostics_) count += d.severity == Severity::Error ? 1 : 0;
  return count;
}

void SourceTexts::add(std::string file, std::string text) { texts_[std::move(file)] = std::move(text); }

std::string_view SourceTexts::line(std::string_view file, int line) const {
  auto it = texts_.find(file);
  if (it == texts_.end() || line < 1) return {};
  std::string_view text = it->second;
  std::size_t start = 0;
  for (int current = 1; current < line; ++current) {
    start = text.find('\n', start);
    if (start == std::string_view::npos) return {};
    ++start;
  }
  std::size_t end = text.find('\n', start);
  std::string_view result = text.substr(start, end == std::string_view::npos ? text.npos : end - start);
  if (!result.empty() && result.back() == '\r') result.remove_suffix(1);
  return result;
}

namespace {

// Source lines are echoed only when printable, so binary garbage cannot corrupt the terminal.
std::string printableLine(std::string_view line) {
  std::string out;
  for (char c : line) {
    auto byte = static_cast<unsigned char>(c);
    out += (byte == '\t' || (byte >= 0x20 && byte < 0x7f)) ? c : '?';
  }
  return out;
}

}  // namespace

std::string render(const Diagnostic& diagnostic, const SourceTexts& sources) {
  const auto& location = diagnostic.location;
  std::string out;
  if (!location.file.empty()) {
    out += location.line > 0 ? fmt::format("{}:{}:{}: ", location.file, location.line, location.column)
                             : fmt::format("{}: ", location.file);
  }
  out += diagnostic.severity == Severity::Error ? "error: " : "warning: ";
  out += diagnostic.message;
  out += '\n';
  std::string_view line = sources.line(location.file, location.line);
  if (!line.empty() && line.size() <= 400) {
    out += fmt::format("  {}\n  ", printableLine(line));
    // The caret line keeps the source's tabs so the caret lands under the right character.
    for (int column = 1; column < location.column && static_cast<std::size_t>(column) <= line.size(); ++column) {
      out += line[column - 1] == '\t' ? '\t' : ' ';
    }
    out += "^\n";
  }
  for (const auto& note : diagnostic.notes) out += fmt::format("  note: {}\n", note);
  return out;
}

std::string render(const Diagnostics& diagnostics, const SourceTexts& sources) {
  std::string out;
  for (const auto& d : diagnostics.all()) out += render(d, sources);
  return out;
}

}  // namespace cusync::dsl
