#include "cluster/agreement.h"

#include <fmt/format.h>

namespace etwire::cluster {

namespace {

// Separates the fields of a process's report in the gathered strings (never in a path or digest).
constexpr char kField = '\x1f';

}  // namespace

std::string encode_report(const ProcessReport& report) {
  return fmt::format("{}{}{}{}{}", report.host, kField, report.digest, kField, report.error);
}

ProcessReport decode_report(const std::string& text) {
  ProcessReport report;
  const size_t a = text.find(kField);
  const size_t b = text.find(kField, a + 1);
  report.host = text.substr(0, a);
  report.digest = text.substr(a + 1, b - a - 1);
  report.error = text.substr(b + 1);
  return report;
}

std::optional<std::string> disagreement(const std::vector<ProcessReport>& reports) {
  std::string failed;
  for (size_t p = 0; p < reports.size(); ++p) {
    if (reports[p].error.empty()) continue;
    failed += fmt::format("\n  process {} on host {}: {}", p, reports[p].host, reports[p].error);
  }
  if (!failed.empty()) {
    return fmt::format("not every emulator process could load the run; nothing was started:{}",
                       failed);
  }
  std::string differ;
  for (size_t p = 1; p < reports.size(); ++p) {
    if (reports[p].digest == reports[0].digest) continue;
    differ += fmt::format("\n  process {} on host {}: {}", p, reports[p].host, reports[p].digest);
  }
  if (differ.empty()) return std::nullopt;
  return fmt::format(
      "the emulator processes loaded different configurations or traces; nothing was started "
      "(every host needs the same files and --set options). Process 0 on host {} has {}; "
      "differing:{}",
      reports[0].host, reports[0].digest, differ);
}

}  // namespace etwire::cluster
