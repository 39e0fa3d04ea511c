#include "outputs/sweep_files.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "collectives/nccl_sizes.h"
#include "outputs/results_files.h"

namespace etwire::outputs {

namespace {

using Json = nlohmann::ordered_json;

// The nccl-tests JSON file version whose shape sweep.json follows.
constexpr int kNcclTestsJsonVersion = 2;
constexpr double kBytesPerGB = 1e9;

std::string series_name(const SweepPoint& p) {
  return fmt::format("{}-{}", collective_type_label(p.kind),
                     collectives::algorithm_name(p.algorithm));
}

Json optional_number(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
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
  row["actual_iterations"] = sweep.iterations;
  row["experiment_name"] = series_name(p);
  row["collective"] = collective_type_label(p.kind);
  row["algorithm"] = collectives::algorithm_name(p.algorithm);
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

Json fit_json(const SweepFit& f) {
  Json fit;
  fit["collective"] = collective_type_label(f.kind);
  fit["algorithm"] = collectives::algorithm_name(f.algorithm);
  fit["busbw_factor"] = f.busbw_factor;
  fit["sizes"] = f.fit ? f.fit->points : 0;
  fit["alpha_us"] = f.fit ? Json(f.fit->alpha_us) : Json(nullptr);
  const std::optional<double> beta = f.fit ? f.fit->beta_gb_per_second() : std::nullopt;
  fit["beta_GBps"] = optional_number(beta);
  fit["beta_alg_GBps"] =
      optional_number(beta ? std::optional<double>(*beta / f.busbw_factor) : std::nullopt);
  fit["rms_relative_error"] = f.fit ? Json(f.fit->rms_relative_error) : Json(nullptr);
  fit["max_relative_error"] = f.fit ? Json(f.fit->max_relative_error) : Json(nullptr);
  return fit;
}

void write_file(const std::string& path, const std::string& text) {
  StreamedFile file(path);
  file.buffer() += text;
  file.appended();
  file.close();
}

}  // namespace

void write_sweep_json(const SweepResults& sweep, const std::string& path) {
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
  config["run_config"] = sweep.config_file;
  config["run_name"] = sweep.run_name;
  config["topology"] = sweep.topology;
  config["ranks"] = sweep.ranks;
  config["type"] = collectives::kNcclElementType;
  config["link_goodput_GBps"] = sweep.goodput_bytes_per_second / kBytesPerGB;
  doc["config"] = std::move(config);
  Json results = Json::array();
  double busbw_sum = 0;
  size_t measured = 0;
  for (const SweepPoint& p : sweep.points) {
    results.push_back(result_json(sweep, p));
    if (!p.measured) continue;
    busbw_sum += p.measured->busbw_gbps;
    ++measured;
  }
  doc["results"] = std::move(results);
  Json fits = Json::array();
  for (const SweepFit& f : fit_sweep(sweep)) fits.push_back(fit_json(f));
  doc["fits"] = std::move(fits);
  doc["average_bus_bandwidth"] = {
      {"bandwidth", measured > 0 ? busbw_sum / static_cast<double>(measured) : 0.0},
      {"okay", "unchecked"}};
  doc["errors"] = sweep.errors;
  doc["notes"] = sweep.notes;
  doc["end_time"] = sweep.end_time;
  write_file(path, doc.dump(2) + "\n");
}

void write_sweep_csv(const SweepResults& sweep, const std::string& path) {
  std::string text =
      "collective,algorithm,requested_size,size,count,type,redop,root,time_us,algbw_GBps,"
      "busbw_GBps,ideal_percent,instances,status,run_dir\n";
  for (const SweepPoint& p : sweep.points) {
    text += fmt::format("{},{},{},{},{},{},{},{},", collective_type_label(p.kind),
                        collectives::algorithm_name(p.algorithm), p.requested_bytes, p.bytes,
                        collectives::nccl_count(p.kind, p.bytes, sweep.ranks),
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
    text += '\n';
  }
  write_file(path, text);
}

}  // namespace etwire::outputs
