// What the configuration loader and validator report: one diagnostic per problem, each naming
// where it is (file:line:col, or the --set argument that introduced the value), the key path
// ("ports[2].mtu"), what kind of problem it is, and a message that says what was expected.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace etwire::control {

enum class Severity : uint8_t { kError, kWarning };

// The class of a problem; tests and tools match on it rather than on message wording.
enum class Problem : uint8_t {
  kSyntax,         // the YAML does not parse, or the file cannot be read
  kWrongType,      // a list where a map was expected, text where a number was, ...
  kUnknownKey,     // a key the schema does not have (the message suggests the nearest one)
  kOutOfRange,     // a number, size, rate or duration outside its allowed range
  kBadValue,       // a value of the right type that is not one of the allowed forms
  kMissing,        // a required key or section is absent
  kDuplicate,      // a key, name, address or QP number used twice
  kBadReference,   // a name that refers to no port or job
  kInconsistent,   // values that contradict each other (Kmin > Kmax, XON >= XOFF, ...)
  kBackend,        // settings a backend needs are missing, or it cannot do what is asked
  kTraceMismatch,  // the trace set disagrees with the configuration
  kTrace,          // the trace set itself is unreadable or malformed
  kBadOverride,    // a --set argument that cannot be applied
};
std::string_view problem_name(Problem problem);  // "syntax", "wrong-type", ...

// Where a value came from. An override location wins over a file position: a value typed on the
// command line is reported as that argument.
struct SourceLocation {
  std::string file;
  int line = 0;               // 1-based; 0 when unknown
  int column = 0;             // 1-based; 0 when unknown
  std::string override_text;  // "ports[1].mtu=9000" when the value came from --set

  bool from_override() const { return !override_text.empty(); }
};

struct Diagnostic {
  Severity severity = Severity::kError;
  Problem problem = Problem::kBadValue;
  SourceLocation where;
  std::string key_path;  // "" for the document as a whole
  std::string message;
};

// "configs/x.yaml:12:5: ports[2].mtu: expected an integer from 256 to 9000, got \"big\"", with
// "warning: " after the location for warnings; "--set ports[2].mtu=big: ports[2].mtu: ..." for
// overrides.
std::string format_diagnostic(const Diagnostic& diagnostic);

// Diagnostics collected while loading and validating, in the order found.
class Diagnostics {
 public:
  void add(Diagnostic diagnostic) { items_.push_back(std::move(diagnostic)); }
  const std::vector<Diagnostic>& items() const { return items_; }
  size_t error_count() const;
  size_t warning_count() const;
  bool has_errors() const { return error_count() > 0; }
  // Every diagnostic, one formatted line each, errors and warnings in the order found.
  std::string to_text() const;

 private:
  std::vector<Diagnostic> items_;
};

// Thrown by the convenience loaders that do not hand back a Diagnostics list.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Diagnostic> errors);
  const std::vector<Diagnostic>& errors() const { return errors_; }

 private:
  std::vector<Diagnostic> errors_;
};

}  // namespace etwire::control
