#include "control/load/document_context.h"

namespace etwire::control {

SourceLocation location_from_mark(const std::string& file, const YAML::Mark& mark) {
  SourceLocation where;
  where.file = file;
  if (mark.line >= 0) {
    where.line = mark.line + 1;
    where.column = mark.column + 1;
  }
  return where;
}

SourceLocation DocumentContext::locate(const YAML::Node& node, std::string_view path) const {
  if (auto argument = overrides_.origin_of(path)) {
    SourceLocation where;
    where.file = file();
    where.override_text = *argument;
    return where;
  }
  if (!node.IsDefined()) return location_from_mark(file(), YAML::Mark::null_mark());
  return location_from_mark(file(), node.Mark());
}

void DocumentContext::note(const YAML::Node& node, const std::string& path) {
  source_map_.record(path, locate(node, path));
}

void DocumentContext::error(Problem problem, const YAML::Node& node, std::string path,
                            std::string message) {
  report(Severity::kError, problem, node, std::move(path), std::move(message));
}

void DocumentContext::warning(Problem problem, const YAML::Node& node, std::string path,
                              std::string message) {
  report(Severity::kWarning, problem, node, std::move(path), std::move(message));
}

void DocumentContext::report(Severity severity, Problem problem, const YAML::Node& node,
                             std::string path, std::string message) {
  Diagnostic d;
  d.severity = severity;
  d.problem = problem;
  d.where = locate(node, path);
  d.key_path = std::move(path);
  d.message = std::move(message);
  out_.add(std::move(d));
}

}  // namespace etwire::control
