#include "cli/split_run_results.h"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace etwire::cli {

namespace {

static_assert(std::is_trivially_copyable_v<transport::FlowRecord>,
              "flow records cross processes as bytes");

std::string flow_bytes(const FlowRecordBuffer& buffer) {
  const auto& records = buffer.records();
  return std::string(reinterpret_cast<const char*>(records.data()),
                     records.size() * sizeof(transport::FlowRecord));
}

clock::Nanos shifted(clock::Nanos t, clock::Nanos shift) {
  return t == clock::kNever ? t : t + shift;
}

}  // namespace

std::optional<SplitRunResults> gather_split_results(
    const cluster::Session& session, const engine::RunEngine& engine,
    const std::vector<cluster::ClockOffset>& offsets, const FlowRecordBuffer& mine) {
  engine::PartialResults part = engine.partial_results();
  // Process 0 turns each start into a shift once it has every process's.
  part.time_shift = engine.started_steady_ns();
  const std::vector<std::string> parts = session.all_gather(engine::serialize_partial(part));
  const std::vector<std::string> flow_parts = session.all_gather(flow_bytes(mine));
  if (session.rank() != 0) return std::nullopt;

  std::vector<engine::PartialResults> decoded;
  for (size_t p = 0; p < parts.size(); ++p) {
    try {
      decoded.push_back(engine::deserialize_partial(parts[p]));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fmt::format("the results of emulator process {}: {}", p, e.what()));
    }
  }
  // A reading of process p's steady clock minus its offset is a reading of process 0's.
  const clock::Nanos start_0 = decoded[0].time_shift;
  std::vector<clock::Nanos> shifts;
  for (size_t p = 0; p < decoded.size(); ++p) {
    const int64_t offset = p < offsets.size() ? offsets[p].offset_ns : 0;
    decoded[p].time_shift = decoded[p].time_shift - offset - start_0;
    shifts.push_back(decoded[p].time_shift);
  }
  std::vector<engine::InstanceNumbers> numbers;
  SplitRunResults gathered;
  gathered.results = engine::merge_partials(std::move(decoded), &numbers);

  // Instances no process completed keep numbers after the merged ones'.
  uint64_t next_instance = gathered.results.collectives.size();
  uint64_t next_flow = 0;
  for (size_t p = 0; p < flow_parts.size(); ++p) {
    const std::string& bytes = flow_parts[p];
    if (bytes.size() % sizeof(transport::FlowRecord) != 0) {
      throw std::runtime_error(fmt::format(
          "the flow records of emulator process {}: {} bytes, not whole records", p, bytes.size()));
    }
    const uint64_t first_flow = next_flow;
    for (size_t at = 0; at < bytes.size(); at += sizeof(transport::FlowRecord)) {
      transport::FlowRecord record;
      std::memcpy(&record, bytes.data() + at, sizeof(record));
      record.flow_id += first_flow;
      next_flow = std::max(next_flow, record.flow_id + 1);
      auto [number, fresh] = numbers[p].try_emplace(record.tags.collective, next_instance);
      if (fresh) ++next_instance;
      record.tags.collective = number->second;
      record.posted_at = shifted(record.posted_at, shifts[p]);
      record.first_byte_out = shifted(record.first_byte_out, shifts[p]);
      record.delivered_at = shifted(record.delivered_at, shifts[p]);
      record.finished_at = shifted(record.finished_at, shifts[p]);
      gathered.flows.push_back(record);
    }
  }
  return gathered;
}

}  // namespace etwire::cli
