#include "outputs/sweep_files.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "collectives/nccl_sizes.h"
#include "common/units.h"
#include "config/enum_names.h"
#include "engine/fct_percentiles.h"
#include "outputs/results_files.h"

namespace etwire::outputs {

namespace {

using Json = nlohmann::ordered_json;

// The nccl-tests JSON file version whose shape sweep.json follows.
constexpr int kNcclTestsJsonVersion = 2;
Json optional_number(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// A point's measured iterations as nccl-tests writes them with per-iteration timing (-I 1): each
// process's time in each iteration (here a rank is a process), each iteration's time the slowest
// rank's, and their statistics (p99 by nearest rank, the coefficient of variation from the
// sample standard deviation). Null when no iteration was finished by every rank.
Json per_iteration_json(const SweepPoint& p) {
  const std::vector<std::vector<double>>& ranks = p.rank_iteration_us;
  size_t iterations = ranks.empty() ? 0 : ranks[0].size();
  for (const std::vector<double>& row : ranks) iterations = std::min(iterations, row.size());
  if (iterations == 0) return nullptr;
  std::vector<double> times(iterations, 0.0);
  Json per_rank = Json::array();
  for (const std::vector<double>& row : ranks) {
    for (size_t i = 0; i < iterations; ++i) times[i] = std::max(times[i], row[i]);
    per_rank.push_back(std::vector<double>(row.begin(), row.begin() + iterations));
  }
  const auto n = static_cast<double>(iterations);
  double sum = 0;
  for (double t : times) sum += t;
  const double mean = sum / n;
  double squares = 0;
  for (double t : times) squares += (t - mean) * (t - mean);
  const double deviation = iterations > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  Json j;
  j["avg_us"] = mean;
  j["min_us"] = sorted.front();
  j["max_us"] = sorted.back();
  j["p99_us"] = sorted[engine::nearest_rank(iterations, 9900) - 1];
  j["cv_pct"] = mean > 0 ? deviation / mean * 100 : 0.0;
  j["times_us"] = std::move(times);
  j["per_process_max_times_us"] = std::move(per_rank);
  return j;
}

Json result_json(const SweepResults& sweep, const SweepPoint& p) {
  Json row;
  row["size"] = p.bytes;
  row["count"] = collectives::nccl_count(p.kind, p.bytes, sweep.ranks);
  row["type"] = collectives::kNcclElementType;
  row["redop"] = collectives::nccl_redop(p.kind);
  // nccl-tests writes the root as a string.
  row["root"] = std::to_string(collectives::nccl_root(p.kind));
  row["out_of_place"] = nullptr;
  if (p.measured) {
    // No data is checked on the wire: nwrong is null, as nccl-tests writes it without checks.
    row["in_place"] = Json{{"time", p.measured->cct_us},
                           {"alg_bw", p.measured->algbw_gbps},
                           {"bus_bw", p.measured->busbw_gbps},
                           {"nwrong", nullptr}};
  } else {
    row["in_place"] = nullptr;
  }
  // Left out rather than null where nothing was measured: readers of nccl-tests' files take an
  // absent key for "no per-iteration data" and read a present one as an object.
  if (Json per_iteration = per_iteration_json(p); !per_iteration.is_null()) {
    row["in_place_per_iter"] = std::move(per_iteration);
  }
  row["actual_iterations"] = sweep.iterations;
  row["experiment_name"] = series_name(series_of(p));
  row["collective"] = collective_type_label(p.kind);
  row["algorithm"] = point_algorithm(p);
  row["protocol"] =
      p.protocol ? Json(config::name_of(config::protocol_names(), *p.protocol)) : Json(nullptr);
  row["requested_size"] = p.requested_bytes;
  row["ideal_percent"] = p.measured ? Json(p.measured->ideal_percent) : Json(nullptr);
  row["instances"] = p.measured ? p.measured->instances : 0;
  row["status"] = p.status;
  row["exit_code"] = p.exit_code;
  row["flows"] = p.flows;
  row["failed_flows"] = p.failed_flows;
  row["run_dir"] = p.run_dir;
  return row;
}

// nccl-tests' average_bus_bandwidth: the mean busbw of the series' measured points.
Json average_bus_bandwidth(double gbps) {
  return {{"bandwidth", gbps}, {"okay", "unchecked"}};
}

Json fit_json(const SweepFit& f) {
  Json fit;
  fit["collective"] = collective_type_label(f.kind);
  fit["algorithm"] = series_algorithm(f);
  fit["busbw_factor"] = f.busbw_factor;
  fit["sizes"] = f.fit ? f.fit->points : 0;
  fit["alpha_us"] = f.fit ? Json(f.fit->alpha_us) : Json(nullptr);
  const std::optional<double> beta = f.fit ? f.fit->beta_gb_per_second() : std::nullopt;
  fit["beta_GBps"] = optional_number(beta);
  fit["beta_alg_GBps"] =
      optional_number(beta ? std::optional<double>(*beta / f.busbw_factor) : std::nullopt);
  fit["rms_relative_error"] = f.fit ? Json(f.fit->rms_relative_error) : Json(nullptr);
  fit["max_relative_error"] = f.fit ? Json(f.fit->max_relative_error) : Json(nullptr);
  fit["average_bus_bandwidth"] = f.average_busbw_gbps;
  return fit;
}

void write_file(const std::string& path, const std::string& text) {
  StreamedFile file(path);
  file.buffer() += text;
  file.appended();
  file.close();
}

// The document of the whole sweep (series null) or of one series, in nccl-tests' shape; `series`
// is one of `fits`.
Json sweep_document(const SweepResults& sweep, const std::vector<SweepFit>& fits,
                    const SweepFit* series) {
  Json doc;
  doc["version"] = kNcclTestsJsonVersion;
  doc["generator"] = "etwire sweep";
  doc["start_time"] = sweep.start_time;
  Json config;
  config["minimum_bytes"] = sweep.min_bytes;
  config["maximum_bytes"] = sweep.max_bytes;
  config["step_factor"] = sweep.step_factor;
  config["warmup_iters"] = sweep.warmup_iterations;
  config["iterations"] = sweep.iterations;
  // Every iteration is timed on its own.
  config["aggregated_iterations"] = 1;
  config["run_config"] = sweep.config_file;
  config["run_name"] = sweep.run_name;
  config["topology"] = sweep.topology;
  config["ranks"] = sweep.ranks;
  config["type"] = collectives::kNcclElementType;
  config["link_goodput_GBps"] = sweep.goodput_bytes_per_second / kBytesPerGB;
  // One entry per rank, the rows of per_process_max_times_us: the emulated host (scale-up
  // domain, mapping.hosts) it belongs to.
  Json devices = Json::array();
  const uint32_t per_host = std::max<uint32_t>(sweep.ranks_per_host, 1);
  for (uint32_t r = 0; r < sweep.ranks; ++r) {
    devices.push_back({{"rank", r}, {"hostname", fmt::format("host {}", r / per_host)}});
  }
  config["devices"] = std::move(devices);
  doc["config"] = std::move(config);
  Json results = Json::array();
  for (const SweepPoint& p : sweep.points) {
    if (series == nullptr || in_series(p, *series)) results.push_back(result_json(sweep, p));
  }
  doc["results"] = std::move(results);
  Json fit_list = Json::array();
  for (const SweepFit& f : fits) {
    if (series == nullptr || &f == series) {
      fit_list.push_back(fit_json(f));
    }
  }
  doc["fits"] = std::move(fit_list);
  // An average over several series (collectives, algorithms) means nothing: with more than one,
  // each is in its series' own file and in fits[].
  if (series != nullptr) {
    doc["average_bus_bandwidth"] = average_bus_bandwidth(series->average_busbw_gbps);
  } else if (fits.size() == 1) {
    doc["average_bus_bandwidth"] = average_bus_bandwidth(fits[0].average_busbw_gbps);
  } else {
    doc["average_bus_bandwidth"] = {{"bandwidth", nullptr}, {"okay", "unchecked"}};
  }
  doc["errors"] = sweep.errors;
  doc["notes"] = sweep.notes;
  doc["end_time"] = sweep.end_time;
  return doc;
}

}  // namespace

std::string sweep_series_file(const SweepFit& series) {
  return fmt::format("{}.json", series_name(series));
}

void write_sweep_json(const SweepResults& sweep, const std::string& path,
                      const std::string& series_dir) {
  const std::vector<SweepFit> fits = fit_sweep(sweep);
  write_file(path, sweep_document(sweep, fits, nullptr).dump(2) + "\n");
  if (series_dir.empty()) return;
  for (const SweepFit& f : fits) {
    write_file((std::filesystem::path(series_dir) / sweep_series_file(f)).string(),
               sweep_document(sweep, fits, &f).dump(2) + "\n");
  }
}

void write_sweep_csv(const SweepResults& sweep, const std::string& path) {
  std::string text =
      "collective,algorithm,protocol,requested_size,size,count,type,redop,root,time_us,"
      "algbw_GBps,busbw_GBps,ideal_percent,instances,status,run_dir,series\n";
  for (const SweepPoint& p : sweep.points) {
    text += fmt::format(
        "{},{},{},{},{},{},{},{},{},", collective_type_label(p.kind), point_algorithm(p),
        p.protocol ? config::name_of(config::protocol_names(), *p.protocol) : "", p.requested_bytes,
        p.bytes, collectives::nccl_count(p.kind, p.bytes, sweep.ranks),
        collectives::kNcclElementType, collectives::nccl_redop(p.kind),
        collectives::nccl_root(p.kind));
    if (p.measured) {
      // Shortest round-trip numbers, as summary.json and the other CSV files write them.
      text += fmt::format("{},{},{},{},{},", Json(p.measured->cct_us).dump(),
                          Json(p.measured->algbw_gbps).dump(), Json(p.measured->busbw_gbps).dump(),
                          Json(p.measured->ideal_percent).dump(), p.measured->instances);
    } else {
      text += ",,,,0,";
    }
    append_csv_text(p.status, text);
    text += ',';
    append_csv_text(p.run_dir, text);
    text += ',' + series_name(series_of(p)) + '\n';
  }
  write_file(path, text);
}

}  // namespace etwire::outputs
