#include "runner/split_run_results.h"

#include <fmt/format.h>

#include <iostream>

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include "outputs/qp_results.h"
#include "outputs/results_files.h"

namespace etwire::runner {

namespace {}  // namespace

namespace {

// Every process's vector of trivially copyable records, gathered as bytes.
template <typename T>
std::vector<std::vector<T>> gather_records(const cluster::Session& session,
                                           const std::vector<T>& mine, const char* what) {
  static_assert(std::is_trivially_copyable_v<T>, "records cross processes as bytes");
  const std::vector<std::string> all = session.all_gather(
      std::string(reinterpret_cast<const char*>(mine.data()), mine.size() * sizeof(T)));
  std::vector<std::vector<T>> out(all.size());
  for (size_t p = 0; p < all.size(); ++p) {
    if (all[p].size() % sizeof(T) != 0) {
      throw std::runtime_error(fmt::format(
          "the {} of emulator process {}: {} bytes, not whole records", what, p, all[p].size()));
    }
    out[p].resize(all[p].size() / sizeof(T));
    std::memcpy(out[p].data(), all[p].data(), all[p].size());
  }
  return out;
}

// A flow between processes is finished on its sender's and delivered on its receiver's: the k-th
// delivery of a requester is its k-th message (posting order, flow ids), which gives the flow its
// delivery time, its ECN marks and, in a measured iteration, an FCT sample for its sender's part.
void join_deliveries(const std::vector<std::vector<engine::RunEngine::RemoteDelivery>>& deliveries,
                     const std::vector<double>& scales, const std::vector<clock::Nanos>& shifts,
                     std::vector<std::vector<transport::FlowRecord>>& flows,
                     std::vector<engine::PartialResults>& parts) {
  // By sending process, port and requester: a port (an RNIC's, or the plan's) numbers its QPs
  // itself, so two ports' may share a number.
  using Requester = std::tuple<size_t, uint32_t, uint32_t>;  // process, port, QP number
  std::map<Requester, std::vector<std::pair<clock::Nanos, uint32_t>>> by_requester;
  for (size_t p = 0; p < deliveries.size(); ++p) {
    for (const auto& d : deliveries[p]) {
      by_requester[{d.sender, d.sender_port, d.requester_qpn}].emplace_back(
          engine::to_reference_time(d.at, scales[p], shifts[p]), d.ecn_marks);
    }
  }
  for (size_t p = 0; p < flows.size(); ++p) {
    std::map<Requester, std::vector<size_t>> waiting;  // by requester, flow indexes
    for (size_t i = 0; i < flows[p].size(); ++i) {
      const transport::FlowRecord& f = flows[p][i];
      if (f.delivered_at == clock::kNever) waiting[{p, f.src_port, f.qpn}].push_back(i);
    }
    std::unordered_map<uint64_t, const engine::CollectiveRecord*> instances;
    for (const engine::CollectiveRecord& c : parts[p].results.collectives) {
      instances[c.instance] = &c;
    }
    for (auto& [requester, indexes] : waiting) {
      auto found = by_requester.find(requester);
      if (found == by_requester.end()) continue;
      std::sort(indexes.begin(), indexes.end(),
                [&](size_t a, size_t b) { return flows[p][a].flow_id < flows[p][b].flow_id; });
      for (size_t k = 0; k < indexes.size() && k < found->second.size(); ++k) {
        transport::FlowRecord& record = flows[p][indexes[k]];
        record.delivered_at = found->second[k].first;
        record.ecn_marks = found->second[k].second;
        auto owner = instances.find(record.tags.collective);
        if (record.status != transport::FlowStatus::kCompleted || owner == instances.end() ||
            owner->second->warmup) {
          continue;
        }
        const size_t kind = owner->second->kind ? static_cast<size_t>(*owner->second->kind)
                                                : size_t{trace::kCollectiveTypeCount};
        if (kind < parts[p].fct_samples.size()) parts[p].fct_samples[kind].push_back(record.fct());
      }
    }
  }
}

}  // namespace

int keep_own_part(const cluster::Session& session, const config::RunConfig& config,
                  const engine::RunEngine& engine, const std::filesystem::path& out,
                  const FlowRecordBuffer* flows,
                  const std::function<int(const engine::RunResults&)>& report) {
  engine::RunResults part = engine.results();
  std::string name = fmt::format("process {}", session.rank());
  for (const config::EmulatorConfig& emulator : config.emulators) {
    if (emulator.rank == static_cast<uint32_t>(session.rank())) name = emulator.name;
  }
  const std::filesystem::path own =
      session.rank() == 0 ? out : out / fmt::format("emulator-{}", name);
  part.diagnosis += fmt::format(
      "{}the run was ended across its emulator processes before their results could be "
      "gathered: this is emulator \"{}\"'s part only (its ranks and its ports, on host {}){}\n",
      part.diagnosis.empty() || part.diagnosis.back() == '\n' ? "" : "\n", name, session.host(),
      session.rank() == 0 ? "; the others wrote theirs in emulator-NAME beside it, on their hosts"
                          : "");
  if (session.rank() == 0) return report(part);
  try {
    std::filesystem::create_directories(own);
    outputs::write_summary_json(part, (own / "summary.json").string());
    if (config.telemetry.record.qps && part.qps_counted)
      outputs::write_qps_csv(part, (own / "qps.csv").string());
    if (flows != nullptr) {
      outputs::FlowCsvWriter csv((own / "flows.csv").string());
      for (const transport::FlowRecord& record : flows->records()) csv.append(record);
      csv.close();
    }
  } catch (const std::exception& e) {
    std::cerr << fmt::format("error: {}\n", e.what());
    return 1;
  }
  std::cerr << fmt::format("emulator \"{}\": its part of the interrupted run is in {}\n", name,
                           own.string());
  return 0;
}

std::optional<SplitRunResults> gather_split_results(
    const cluster::Session& session, const engine::RunEngine& engine,
    const std::vector<cluster::ClockOffset>& offsets, const FlowRecordBuffer& mine) {
  const engine::PartialResults part = engine.partial_results();
  const std::vector<std::string> parts = session.all_gather(engine::serialize_partial(part));
  auto flows = gather_records(session, mine.records(), "flow records");
  const auto deliveries = gather_records(session, engine.remote_deliveries(), "deliveries");
  const std::vector<engine::RunEngine::ClockPair> my_clocks = {engine.clock_at_start(),
                                                               engine.clock_at_end()};
  const auto clocks = gather_records(session, my_clocks, "clock readings");
  if (session.rank() != 0) return std::nullopt;

  std::vector<engine::PartialResults> decoded;
  for (size_t p = 0; p < parts.size(); ++p) {
    try {
      decoded.push_back(engine::deserialize_partial(parts[p]));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fmt::format("the results of emulator process {}: {}", p, e.what()));
    }
    if (clocks[p].size() != 2) {
      throw std::runtime_error(fmt::format("emulator process {} sent no clock readings", p));
    }
  }
  // Process p's run time t is, on its steady clock, its start reading plus (t - its start's run
  // time) x its rate (from its start and end readings); minus its measured offset, a reading of
  // process 0's steady clock; minus process 0's steady time at its run time 0, process 0's run
  // time.
  const auto rate = [](const std::vector<engine::RunEngine::ClockPair>& pair) {
    const double run = static_cast<double>(pair[1].run_ns - pair[0].run_ns);
    return run > 0 ? static_cast<double>(pair[1].steady_ns - pair[0].steady_ns) / run : 1.0;
  };
  const auto steady_at_zero = [&](size_t p) {
    return static_cast<double>(clocks[p][0].steady_ns) -
           static_cast<double>(clocks[p][0].run_ns) * rate(clocks[p]);
  };
  std::vector<double> scales;
  std::vector<clock::Nanos> shifts;
  for (size_t p = 0; p < decoded.size(); ++p) {
    const int64_t offset = p < offsets.size() ? offsets[p].offset_ns : 0;
    decoded[p].time_scale = rate(clocks[p]);
    decoded[p].time_shift = static_cast<clock::Nanos>(
        std::llround(steady_at_zero(p) - static_cast<double>(offset) - steady_at_zero(0)));
    scales.push_back(decoded[p].time_scale);
    shifts.push_back(decoded[p].time_shift);
    for (transport::FlowRecord& record : flows[p]) {
      for (clock::Nanos* t :
           {&record.posted_at, &record.first_byte_out, &record.delivered_at, &record.finished_at}) {
        *t = engine::to_reference_time(*t, scales[p], shifts[p]);
      }
    }
  }
  join_deliveries(deliveries, scales, shifts, flows, decoded);

  // How good the common time base is, in the results themselves.
  std::vector<std::string> time_base;
  for (size_t p = 1; p < decoded.size() && p < offsets.size(); ++p) {
    const std::string who = decoded[p].emulator.empty()
                                ? fmt::format("process {}", p)
                                : fmt::format("emulator \"{}\"", decoded[p].emulator);
    time_base.push_back(fmt::format(
        "{} (process {} on host {}): times put on process 0's clock with an offset of {} ns "
        "measured to within {} ns, and its clock's rate corrected by {:+.1f} ppm",
        who, p, decoded[p].host, offsets[p].offset_ns, offsets[p].error_ns,
        (scales[p] - 1.0) * 1e6));
  }
  std::vector<engine::InstanceNumbers> numbers;
  SplitRunResults gathered;
  gathered.results = engine::merge_partials(std::move(decoded), &numbers);
  gathered.results.notes.insert(gathered.results.notes.end(), time_base.begin(), time_base.end());
  // Instances no process completed keep numbers after the merged ones'.
  uint64_t next_instance = gathered.results.collectives.size();
  uint64_t next_flow = 0;
  for (size_t p = 0; p < flows.size(); ++p) {
    const uint64_t first_flow = next_flow;
    for (transport::FlowRecord& record : flows[p]) {
      record.flow_id += first_flow;
      next_flow = std::max(next_flow, record.flow_id + 1);
      auto [number, fresh] = numbers[p].try_emplace(record.tags.collective, next_instance);
      if (fresh) ++next_instance;
      record.tags.collective = number->second;
      gathered.flows.push_back(record);
    }
  }
  return gathered;
}

}  // namespace etwire::runner
