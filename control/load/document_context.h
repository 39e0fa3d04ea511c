// State shared while one YAML document is read against the schema: where diagnostics go, which
// values came from --set, and the source map being filled. Internal to control/.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "control/load/diagnostic.h"
#include "control/load/overrides.h"
#include "control/load/schema_recorder.h"
#include "control/load/source_map.h"

namespace etwire::control {

class DocumentContext {
 public:
  DocumentContext(const AppliedOverrides& overrides, SourceMap& source_map, Diagnostics& out)
      : overrides_(overrides), source_map_(source_map), out_(out) {}

  // The --set argument for values that came from one, else the node's position in the file.
  SourceLocation locate(const YAML::Node& node, std::string_view path) const;
  // Records where `path` is, for checks made later on the plain structs.
  void note(const YAML::Node& node, const std::string& path);

  void error(Problem problem, const YAML::Node& node, std::string path, std::string message);
  void warning(Problem problem, const YAML::Node& node, std::string path, std::string message);
  // For a position other than a node's (a map key rather than its value).
  void report(Diagnostic diagnostic) { out_.add(std::move(diagnostic)); }

  const std::string& file() const { return source_map_.file(); }
  const AppliedOverrides& overrides() const { return overrides_; }
  SourceMap& source_map() { return source_map_; }
  Diagnostics& diagnostics() { return out_; }

  // While the JSON Schema is written, every reader says what it expects at its path, present in
  // the document or not. Callers test recording() first, so a load builds no ExpectedValue.
  void record_into(SchemaRecorder* recorder) { recorder_ = recorder; }
  bool recording() const { return recorder_ != nullptr; }
  void expect(std::string_view path, ExpectedValue value) {
    recorder_->expect(path, std::move(value));
  }

 private:
  void report(Severity severity, Problem problem, const YAML::Node& node, std::string path,
              std::string message);
  const AppliedOverrides& overrides_;
  SourceMap& source_map_;
  Diagnostics& out_;
  SchemaRecorder* recorder_ = nullptr;
};

// yaml-cpp marks are 0-based and -1 when unknown.
SourceLocation location_from_mark(const std::string& file, const YAML::Mark& mark);

}  // namespace etwire::control
