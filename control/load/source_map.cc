#include "control/load/source_map.h"

namespace etwire::control {

namespace {

// "a.b[2].c" -> "a.b[2]" -> "a.b" -> "a" -> "".
std::string_view parent_of(std::string_view path) {
  size_t cut = path.find_last_of(".[");
  return cut == std::string_view::npos ? std::string_view() : path.substr(0, cut);
}

}  // namespace

void SourceMap::record(const std::string& path, SourceLocation where) {
  entries_.insert_or_assign(path, std::move(where));
}

SourceLocation SourceMap::locate(std::string_view path) const {
  for (std::string_view at = path;; at = parent_of(at)) {
    auto it = entries_.find(at);
    if (it != entries_.end()) return it->second;
    if (at.empty()) break;
  }
  SourceLocation start;
  start.file = file_;
  start.line = 1;
  start.column = 1;
  return start;
}

Diagnostic SourceMap::make(Severity severity, Problem problem, std::string path,
                           std::string message) const {
  Diagnostic d;
  d.severity = severity;
  d.problem = problem;
  d.where = locate(path);
  d.key_path = std::move(path);
  d.message = std::move(message);
  return d;
}

}  // namespace etwire::control
