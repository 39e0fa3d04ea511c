#include "outputs/compare/run_comparison.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace etwire::outputs {

namespace {

bool is_congestion(ComparedSection section) {
  return section == ComparedSection::kCongestion;
}

ComparedMetric compared(ComparedSection section, std::string subject, std::string metric,
                        std::string unit, std::optional<double> a, std::optional<double> b,
                        const Tolerances& tolerances) {
  ComparedMetric m;
  m.section = section;
  m.subject = std::move(subject);
  m.metric = std::move(metric);
  m.unit = std::move(unit);
  m.a = a;
  m.b = b;
  m.tolerance_percent = tolerances.of(m.metric, is_congestion(section));
  m.a_runs = a ? 1 : 0;
  m.b_runs = b ? 1 : 0;
  if (!a || !b) return m;
  m.delta = *b - *a;
  if (*a != 0) {
    m.delta_percent = *m.delta / std::fabs(*a) * 100.0;
  } else if (*b == 0) {
    m.delta_percent = 0.0;
  }
  if (m.tolerance_percent) {
    // No percentage (A = 0, B not): a change no finite tolerance covers.
    m.exceeded = !m.delta_percent || std::fabs(*m.delta_percent) > *m.tolerance_percent;
  }
  return m;
}

template <typename Map>
std::vector<std::string> keys_of(const Map& map) {
  std::vector<std::string> keys;
  for (const auto& entry : map) keys.push_back(entry.first);
  return keys;
}

std::string joined(const std::vector<std::string>& items) {
  return items.empty() ? std::string("none") : fmt::format("{}", fmt::join(items, ", "));
}

template <typename Map, typename Field>
std::optional<double> field_of(const Map& map, const std::string& key, Field field) {
  const auto it = map.find(key);
  if (it == map.end()) return std::nullopt;
  return field(it->second);
}

void compare_collectives(RunComparison& c, const std::vector<std::string>& types) {
  using D = CollectiveTypeDigest;
  struct Row {
    const char* metric;
    const char* unit;
    std::optional<double> (*value)(const D&);
  };
  static const Row rows[] = {
      {"instances", "", [](const D& d) -> std::optional<double> { return d.instances; }},
      {"cct", "us", [](const D& d) -> std::optional<double> { return d.cct_mean_us; }},
      {"cct_p50", "us", [](const D& d) -> std::optional<double> { return d.cct_p50_us; }},
      {"busbw", "GB/s", [](const D& d) { return d.busbw_GBps; }},
      {"ideal", "%", [](const D& d) { return d.ideal_percent; }},
  };
  for (const std::string& type : types) {
    for (const Row& row : rows) {
      const auto a = field_of(c.a.collectives, type, row.value);
      const auto b = field_of(c.b.collectives, type, row.value);
      ComparedMetric m =
          compared(ComparedSection::kCollectives, type, row.metric, row.unit, a, b, c.tolerances);
      // The instance count says whether the rows compare like with like; it is not a
      // performance figure, so no tolerance applies to it.
      if (m.metric == "instances") {
        m.tolerance_percent.reset();
        m.exceeded = false;
      }
      c.metrics.push_back(std::move(m));
    }
  }
}

void compare_fct(RunComparison& c, const std::vector<std::string>& types) {
  struct Row {
    const char* metric;
    double FctDigest::*member;
  };
  static const Row rows[] = {{"fct_p50", &FctDigest::p50_us},
                             {"fct_p99", &FctDigest::p99_us},
                             {"fct_max", &FctDigest::max_us}};
  for (const std::string& type : types) {
    if (!c.a.fct.count(type) && !c.b.fct.count(type)) continue;
    for (const Row& row : rows) {
      const auto value = [&](const FctDigest& f) -> std::optional<double> { return f.*row.member; };
      c.metrics.push_back(compared(ComparedSection::kFct, type, row.metric, "us",
                                   field_of(c.a.fct, type, value), field_of(c.b.fct, type, value),
                                   c.tolerances));
    }
  }
}

// Iterations pair up by job name and iteration number; two configurations whose jobs are named
// differently pair up by position instead, so the JCT of "job A iteration 1" still meets that of
// "job B iteration 1".
void compare_iterations(RunComparison& c) {
  const auto& a = c.a.jct_ms;
  const auto& b = c.b.jct_ms;
  const bool any_key_shared = std::any_of(a.begin(), a.end(), [&](const auto& entry) {
    return std::any_of(b.begin(), b.end(),
                       [&](const auto& other) { return other.first == entry.first; });
  });
  const auto subject = [](const std::pair<std::string, int64_t>& key) {
    return fmt::format("{} iteration {}", key.first, key.second);
  };
  if (!any_key_shared) {
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      std::string name = i < a.size() ? subject(a[i].first) : subject(b[i].first);
      if (i < a.size() && i < b.size() && a[i].first != b[i].first) {
        name += fmt::format(" / {}", subject(b[i].first));
      }
      c.metrics.push_back(compared(ComparedSection::kIterations, std::move(name), "jct", "ms",
                                   i < a.size() ? std::optional<double>(a[i].second) : std::nullopt,
                                   i < b.size() ? std::optional<double>(b[i].second) : std::nullopt,
                                   c.tolerances));
    }
    return;
  }
  std::vector<bool> b_used(b.size(), false);
  for (const auto& [key, jct] : a) {
    std::optional<double> other;
    for (size_t i = 0; i < b.size(); ++i) {
      if (!b_used[i] && b[i].first == key) {
        other = b[i].second;
        b_used[i] = true;
        break;
      }
    }
    c.metrics.push_back(compared(ComparedSection::kIterations, subject(key), "jct", "ms", jct,
                                 other, c.tolerances));
  }
  for (size_t i = 0; i < b.size(); ++i) {
    if (b_used[i]) continue;
    c.metrics.push_back(compared(ComparedSection::kIterations, subject(b[i].first), "jct", "ms",
                                 std::nullopt, b[i].second, c.tolerances));
  }
}

void compare_congestion(RunComparison& c) {
  const auto total = [](const RunDigest& run, const std::string& name) -> std::optional<double> {
    for (const auto& [counter, value] : run.congestion) {
      if (counter == name && value) return static_cast<double>(*value);
    }
    return std::nullopt;
  };
  for (const auto& [name, value] : c.a.congestion) {
    c.metrics.push_back(compared(ComparedSection::kCongestion, "", name, "", total(c.a, name),
                                 total(c.b, name), c.tolerances));
  }
}

}  // namespace

const char* compared_section_name(ComparedSection section) {
  switch (section) {
    case ComparedSection::kCollectives:
      return "collectives";
    case ComparedSection::kFct:
      return "fct";
    case ComparedSection::kIterations:
      return "iterations";
    case ComparedSection::kCongestion:
      return "congestion";
  }
  return "?";
}

size_t RunComparison::exceeded() const {
  return static_cast<size_t>(std::count_if(metrics.begin(), metrics.end(),
                                           [](const ComparedMetric& m) { return m.exceeded; }));
}

RunComparison compare_runs(RunDigest a, RunDigest b, const Tolerances& tolerances,
                           std::string label_a, std::string label_b) {
  RunComparison c;
  c.label_a = std::move(label_a);
  c.label_b = std::move(label_b);
  c.a = std::move(a);
  c.b = std::move(b);
  c.tolerances = tolerances;
  // Every type either run has: a type one run lacks still shows, with "-" on the other side.
  std::vector<std::string> types = keys_of(c.a.collectives);
  for (const std::string& type : keys_of(c.b.collectives)) {
    if (!c.a.collectives.count(type)) types.push_back(type);
  }
  std::sort(types.begin(), types.end());
  bool shared = false;
  for (const std::string& type : types) {
    const bool in_a = c.a.collectives.count(type) > 0;
    const bool in_b = c.b.collectives.count(type) > 0;
    shared = shared || (in_a && in_b);
    if (!in_b) c.only_in_a.push_back(type);
    if (!in_a) c.only_in_b.push_back(type);
  }
  if (!shared) {
    throw CompareInputError(
        fmt::format("{} ({}) and {} ({}) share no collective type: {} has {}; {} has {} (measured "
                    "iterations)",
                    c.label_a, c.a.dir.string(), c.label_b, c.b.dir.string(), c.label_a,
                    joined(keys_of(c.a.collectives)), c.label_b, joined(keys_of(c.b.collectives))));
  }
  compare_collectives(c, types);
  compare_fct(c, types);
  compare_iterations(c);
  compare_congestion(c);
  return c;
}

std::pair<std::string, std::string> default_labels(const RunDigest& a, const RunDigest& b) {
  const auto dir_name = [](const std::filesystem::path& dir) {
    // "results/" has an empty filename: the name is its parent's.
    const std::filesystem::path clean = dir.lexically_normal();
    std::string name = clean.filename().string();
    if (name.empty()) name = clean.parent_path().filename().string();
    return name;
  };
  std::string name_a = dir_name(a.dir), name_b = dir_name(b.dir);
  if (!name_a.empty() && !name_b.empty() && name_a != name_b && name_a != "." && name_b != ".") {
    return {name_a, name_b};
  }
  if (!a.run_name.empty() && !b.run_name.empty() && a.run_name != b.run_name) {
    return {a.run_name, b.run_name};
  }
  return {"A", "B"};
}

}  // namespace etwire::outputs
