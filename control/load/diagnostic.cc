#include "control/load/diagnostic.h"

#include <fmt/format.h>

#include <algorithm>

namespace etwire::control {

std::string_view problem_name(Problem problem) {
  switch (problem) {
    case Problem::kSyntax:
      return "syntax";
    case Problem::kWrongType:
      return "wrong-type";
    case Problem::kUnknownKey:
      return "unknown-key";
    case Problem::kOutOfRange:
      return "out-of-range";
    case Problem::kBadValue:
      return "bad-value";
    case Problem::kMissing:
      return "missing";
    case Problem::kDuplicate:
      return "duplicate";
    case Problem::kBadReference:
      return "bad-reference";
    case Problem::kInconsistent:
      return "inconsistent";
    case Problem::kBackend:
      return "backend";
    case Problem::kTraceMismatch:
      return "trace-mismatch";
    case Problem::kTrace:
      return "trace";
    case Problem::kBadOverride:
      return "bad-override";
  }
  return "unknown";
}

std::string format_diagnostic(const Diagnostic& d) {
  std::string text;
  if (d.where.from_override()) {
    text = "--set " + d.where.override_text;
  } else {
    text = d.where.file.empty() ? "<config>" : d.where.file;
    if (d.where.line > 0) text += fmt::format(":{}:{}", d.where.line, d.where.column);
  }
  text += ": ";
  if (d.severity == Severity::kWarning) text += "warning: ";
  if (!d.key_path.empty()) text += d.key_path + ": ";
  text += d.message;
  return text;
}

size_t Diagnostics::error_count() const {
  return static_cast<size_t>(std::count_if(items_.begin(), items_.end(), [](const Diagnostic& d) {
    return d.severity == Severity::kError;
  }));
}

size_t Diagnostics::warning_count() const {
  return items_.size() - error_count();
}

std::string Diagnostics::to_text() const {
  std::string text;
  for (const auto& d : items_) text += format_diagnostic(d) + "\n";
  return text;
}

namespace {

std::string summarize(const std::vector<Diagnostic>& errors) {
  if (errors.empty()) return "invalid configuration";
  std::string text = format_diagnostic(errors.front());
  if (errors.size() > 1) text += fmt::format(" (and {} more)", errors.size() - 1);
  return text;
}

}  // namespace

ConfigError::ConfigError(std::vector<Diagnostic> errors)
    : std::runtime_error(summarize(errors)), errors_(std::move(errors)) {}

}  // namespace etwire::control
