#include "outputs/compare/comparison_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "outputs/compare/repeated_comparison.h"
#include "outputs/output_file.h"

namespace etwire::outputs {

namespace {

using Json = nlohmann::ordered_json;

// Counts print as integers; times and bandwidths with the decimals the console report uses.
std::string value_text(const std::optional<double>& value, const std::string& unit) {
  if (!value) return "-";
  if (unit.empty()) return fmt::format("{:.0f}", *value);
  if (unit == "ms") return fmt::format("{:.3f}", *value);
  if (unit == "%") return fmt::format("{:.1f}", *value);
  return fmt::format("{:.2f}", *value);
}

std::string delta_text(const ComparedMetric& m) {
  if (!m.delta) return "-";
  if (m.unit.empty()) return fmt::format("{:+.0f}", *m.delta);
  return fmt::format("{:+.{}f}", *m.delta, m.unit == "ms" ? 3 : (m.unit == "%" ? 1 : 2));
}

std::string percent_text(const ComparedMetric& m) {
  if (!m.delta) return "-";
  if (!m.delta_percent) return "new";  // A is 0, B is not
  return fmt::format("{:+.1f}%", *m.delta_percent);
}

std::string spread_text(uint32_t runs, double sd, const std::string& unit) {
  if (runs < 2) return "-";
  if (unit.empty()) return fmt::format("{:.1f}", sd);  // a count's spread need not be whole
  return value_text(sd, unit);
}

std::string interval_text(const ComparedMetric& m) {
  if (!m.delta_percent_ci) return "-";
  return fmt::format("{:+.1f}..{:+.1f}%", m.delta_percent_ci->first, m.delta_percent_ci->second);
}

bool repeated(const RunComparison& c) {
  return !c.repeats_a.empty() || !c.repeats_b.empty();
}

std::string flag_text(const ComparedMetric& m) {
  if (m.exceeded) return fmt::format("! >{:g}%", *m.tolerance_percent);
  if (m.tolerance_percent && m.delta) return "ok";
  return "";
}

std::string metric_label(const ComparedMetric& m) {
  return m.unit.empty() ? m.metric : fmt::format("{} ({})", m.metric, m.unit);
}

std::string run_line(const std::string& side, const std::string& label, const RunDigest& run) {
  return fmt::format("{}: {}{} (run {}, {}, {} ranks{}, config {})\n", side,
                     label == side || label == run.dir.string() ? "" : fmt::format("{} = ", label),
                     run.dir.string(), run.run_name.empty() ? "-" : run.run_name,
                     run.status.empty() ? "status unknown" : run.status, run.world_size,
                     run.topology.empty() ? "" : fmt::format(", {}", run.topology),
                     run.config_digest.empty() ? "-" : run.config_digest.substr(0, 12));
}

ComparisonSection section_of(const RunComparison& c, ComparedSection section,
                             const std::string& title, const std::string& subject_header) {
  ComparisonSection out{title, {}, {}};
  std::vector<std::string>& headers = out.table.header;
  if (!subject_header.empty()) headers.push_back(subject_header);
  const bool repeats = repeated(c);
  const bool any_tolerance = !c.tolerances.empty();
  headers.push_back("metric");
  headers.push_back(c.label_a);
  if (repeats) headers.push_back("+-" + c.label_a);
  headers.push_back(c.label_b);
  if (repeats) headers.push_back("+-" + c.label_b);
  headers.push_back("delta");
  headers.push_back("delta_%");
  if (repeats) headers.push_back("ci95_%");
  if (any_tolerance) headers.push_back("tolerance");
  for (const ComparedMetric& m : c.metrics) {
    if (m.section != section) continue;
    std::vector<std::string> row;
    if (!subject_header.empty()) row.push_back(m.subject);
    row.push_back(metric_label(m));
    row.push_back(value_text(m.a, m.unit));
    if (repeats) row.push_back(spread_text(m.a_runs, m.a_sd, m.unit));
    row.push_back(value_text(m.b, m.unit));
    if (repeats) row.push_back(spread_text(m.b_runs, m.b_sd, m.unit));
    row.push_back(delta_text(m));
    row.push_back(percent_text(m));
    if (repeats) row.push_back(interval_text(m));
    if (any_tolerance) row.push_back(flag_text(m));
    out.table.rows.push_back(std::move(row));
    out.beyond.push_back(m.exceeded);
  }
  return out;
}

Json optional_json(const std::optional<double>& value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

Json run_json(const std::string& label, const RunDigest& run) {
  Json j;
  j["label"] = label;
  j["dir"] = run.dir.string();
  j["run"] = run.run_name;
  j["status"] = run.status;
  j["config_digest"] = run.config_digest;
  j["world_size"] = run.world_size;
  j["topology"] = run.topology;
  return j;
}

struct SectionHeading {
  ComparedSection section;
  const char* title;
  const char* subject_header;  // "" for rows without a subject
};

constexpr SectionHeading kSectionHeadings[] = {
    {ComparedSection::kCollectives,
     "Collectives, measured iterations (cct: mean, cct_p50: median; busbw: mean; ideal: busbw / "
     "goodput)",
     "collective"},
    {ComparedSection::kFct, "Flow completion times, measured iterations (nearest rank)",
     "collective"},
    {ComparedSection::kIterations, "Iterations, measured (JCT)", "iteration"},
    {ComparedSection::kCongestion, "Congestion counters, summed over the ports", ""}};

}  // namespace

std::vector<ComparisonSection> comparison_sections(const RunComparison& c) {
  std::vector<ComparisonSection> sections;
  for (const SectionHeading& heading : kSectionHeadings) {
    sections.push_back(section_of(c, heading.section, heading.title, heading.subject_header));
  }
  std::erase_if(sections, [](const ComparisonSection& s) { return s.table.rows.empty(); });
  return sections;
}

std::string repeat_spread_text(const std::vector<RunDigest>& runs) {
  // The runs set against themselves: each row's mean and spread over the runs is side A's.
  const RunComparison c = compare_repeats(runs, runs, Tolerances(), "runs", "runs");
  std::string out;
  for (const SectionHeading& heading : kSectionHeadings) {
    TableCells table;
    if (*heading.subject_header != '\0') table.header.push_back(heading.subject_header);
    for (const char* column : {"metric", "mean", "+-", "cv_%", "runs"}) {
      table.header.push_back(column);
    }
    for (const ComparedMetric& m : c.metrics) {
      if (m.section != heading.section) continue;
      std::vector<std::string> row;
      if (*heading.subject_header != '\0') row.push_back(m.subject);
      row.push_back(metric_label(m));
      row.push_back(value_text(m.a, m.unit));
      row.push_back(spread_text(m.a_runs, m.a_sd, m.unit));
      row.push_back(m.a_runs > 1 && m.a && *m.a != 0
                        ? fmt::format("{:.1f}", m.a_sd / std::fabs(*m.a) * 100.0)
                        : "-");
      row.push_back(fmt::format("{}", m.a_runs));
      table.rows.push_back(std::move(row));
    }
    if (table.rows.empty()) continue;
    out += fmt::format("\n{}\n", heading.title);
    out += render_text(table);
  }
  return out;
}

std::string tolerance_verdict(const RunComparison& c) {
  if (c.tolerances.empty()) return "";
  const size_t exceeded = c.exceeded();
  return exceeded == 0 ? "Within tolerance: no delta beyond it."
                       : fmt::format("Beyond tolerance: {} metric{} (marked !).", exceeded,
                                     exceeded == 1 ? "" : "s");
}

std::string comparison_text(const RunComparison& c) {
  std::string out;
  out += run_line("A", c.label_a, c.a);
  out += run_line("B", c.label_b, c.b);
  for (const auto& [side, repeats] : {std::pair{"A", &c.repeats_a}, std::pair{"B", &c.repeats_b}}) {
    if (repeats->size() > 1) {
      std::vector<std::string> dirs;
      for (const std::filesystem::path& dir : *repeats) dirs.push_back(dir.string());
      out += fmt::format("{}: {} runs: {}\n", side, dirs.size(), fmt::join(dirs, ", "));
    }
  }
  out += fmt::format("delta = B - A; delta_% = delta / A (\"new\": A is 0, B is not)\n");
  if (repeated(c)) {
    out +=
        "A and B: means over each side's runs; +-: their sample standard deviation; ci95_%: the "
        "95 % confidence interval of delta_% (Welch); a tolerance flags a metric only when its "
        "whole interval lies beyond it\n";
  }
  if (!c.only_in_a.empty())
    out += fmt::format("Only {} has {}\n", c.label_a, fmt::join(c.only_in_a, ", "));
  if (!c.only_in_b.empty())
    out += fmt::format("Only {} has {}\n", c.label_b, fmt::join(c.only_in_b, ", "));
  for (const ComparisonSection& section : comparison_sections(c)) {
    out += fmt::format("\n{}\n", section.title);
    out += render_text(section.table);
  }
  if (!c.tolerances.empty()) out += fmt::format("\n{}\n", tolerance_verdict(c));
  return out;
}

std::string comparison_json(const RunComparison& c) {
  Json doc;
  doc["a"] = run_json(c.label_a, c.a);
  doc["b"] = run_json(c.label_b, c.b);
  if (repeated(c)) {
    for (const auto& [key, repeats] :
         {std::pair{"a_dirs", &c.repeats_a}, std::pair{"b_dirs", &c.repeats_b}}) {
      Json dirs = Json::array();
      for (const std::filesystem::path& dir : *repeats) dirs.push_back(dir.string());
      doc[key] = std::move(dirs);
    }
  }
  Json tolerances = Json::object();
  tolerances["default_percent"] = optional_json(c.tolerances.all());
  Json per_metric = Json::object();
  for (const auto& [metric, percent] : c.tolerances.per_metric()) per_metric[metric] = percent;
  tolerances["per_metric_percent"] = std::move(per_metric);
  doc["tolerances"] = std::move(tolerances);
  Json metrics = Json::array();
  for (const ComparedMetric& m : c.metrics) {
    Json j;
    j["section"] = compared_section_name(m.section);
    j["subject"] = m.subject;
    j["metric"] = m.metric;
    j["unit"] = m.unit;
    j["a"] = optional_json(m.a);
    j["b"] = optional_json(m.b);
    j["delta"] = optional_json(m.delta);
    j["delta_percent"] = optional_json(m.delta_percent);
    j["tolerance_percent"] = optional_json(m.tolerance_percent);
    j["exceeded"] = m.exceeded;
    if (repeated(c)) {
      j["a_runs"] = m.a_runs;
      j["b_runs"] = m.b_runs;
      j["a_sd"] = m.a_sd;
      j["b_sd"] = m.b_sd;
      j["delta_percent_ci95"] =
          m.delta_percent_ci ? Json::array({m.delta_percent_ci->first, m.delta_percent_ci->second})
                             : Json(nullptr);
    }
    metrics.push_back(std::move(j));
  }
  doc["metrics"] = std::move(metrics);
  doc["only_in_a"] = c.only_in_a;
  doc["only_in_b"] = c.only_in_b;
  doc["exceeded"] = c.exceeded();
  return doc.dump(2) + "\n";
}

void write_comparison_json(const RunComparison& comparison, const std::string& path) {
  write_file_atomically(path, comparison_json(comparison));
}

}  // namespace etwire::outputs
