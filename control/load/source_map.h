// Where each value of the configuration came from, by key path, so that checks made after
// parsing (on the plain structs) can still point at file:line:col or at the --set argument.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "control/load/diagnostic.h"

namespace etwire::control {

class SourceMap {
 public:
  explicit SourceMap(std::string file = "") : file_(std::move(file)) {}

  void record(const std::string& path, SourceLocation where);
  // The location of `path`, or of its nearest recorded ancestor ("ports[1].dpdk" for
  // "ports[1].dpdk.vdev" when vdev is absent), or the start of the file.
  SourceLocation locate(std::string_view path) const;
  bool contains(std::string_view path) const { return entries_.count(std::string(path)) > 0; }
  const std::string& file() const { return file_; }

  // Builds a diagnostic located at `path`.
  Diagnostic make(Severity severity, Problem problem, std::string path, std::string message) const;

 private:
  std::string file_;
  std::map<std::string, SourceLocation, std::less<>> entries_;
};

}  // namespace etwire::control
