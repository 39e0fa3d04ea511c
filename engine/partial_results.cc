// Partial results: their byte encoding, and the merge of every process's part into one run's
// results.
#include "engine/partial_results.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "engine/fct_percentiles.h"
#include "trace/node.h"

namespace etwire::engine {

namespace {

// "ETWPARTS" read as a little-endian integer, then the version. A version bump is the only way
// the layout changes: every process of a run is the same build, so no older layout is read.
constexpr uint64_t kMagic = 0x5354524150575445;
constexpr uint32_t kVersion = 1;

// Per kind index of the FCT samples (trace::kCollectiveTypeCount + 1): the last is
// point-to-point, as the engine keeps them.
constexpr size_t kFctKinds = static_cast<size_t>(trace::kCollectiveTypeCount) + 1;

class Writer {
 public:
  size_t size() const { return out_.size(); }
  std::string take() { return std::move(out_); }

  void put(uint8_t value) { out_.push_back(static_cast<char>(value)); }
  void put(bool value) { put(static_cast<uint8_t>(value ? 1 : 0)); }
  void put(uint32_t value) { little_endian(value, 4); }
  void put(int32_t value) { put(static_cast<uint32_t>(value)); }
  void put(uint64_t value) { little_endian(value, 8); }
  void put(int64_t value) { put(static_cast<uint64_t>(value)); }
  void put(double value) { put(std::bit_cast<uint64_t>(value)); }
  void put(const std::string& text) {
    put(uint64_t{text.size()});
    out_.append(text);
  }
  void put(RunStatus status) { put(static_cast<uint8_t>(status)); }
  void put(collectives::Algorithm algorithm) { put(static_cast<uint8_t>(algorithm)); }
  void put(collectives::CollectiveKind kind) {
    put(kind.has_value());
    if (kind) put(static_cast<uint8_t>(*kind));
  }
  template <typename T>
  void put(const std::vector<T>& items) {
    put(uint64_t{items.size()});
    for (const T& item : items) put(item);
  }
  template <size_t N>
  void put(const std::array<uint64_t, N>& items) {
    put(uint64_t{N});
    for (uint64_t item : items) put(item);
  }

  void put(const JobSummary& job) {
    put(job.name);
    put(job.trace);
    put(job.world_size);
    put(job.iterations);
    put(job.warmup_iterations);
    put(job.nodes_issued);
  }
  void put(const CollectiveRecord& c) {
    put(c.instance);
    put(c.job);
    put(c.kind);
    put(c.algorithm);
    put(c.group);
    put(c.sequence);
    put(c.group_size);
    put(c.tag);
    put(c.src);
    put(c.dst);
    put(c.trace_bytes);
    put(c.algbw_bytes);
    put(c.wire_bytes);
    put(c.iteration);
    put(c.warmup);
    put(c.first_arrival);
    put(c.last_arrival);
    put(c.end);
    put(c.flows);
    put(c.failed_flows);
  }
  void put(const RankIteration& rank) {
    put(rank.start);
    put(rank.end);
    put(rank.compute_ns);
    put(rank.comm_ns);
    put(rank.exposed_comm_ns);
  }
  void put(const IterationRecord& it) {
    put(it.job);
    put(it.iteration);
    put(it.warmup);
    put(it.start);
    put(it.end);
    put(it.ranks);
  }
  void put(const PortQueueRecord& queue) {
    put(queue.queue);
    put(queue.lcore);
    put(queue.tx_bytes);
    put(queue.rx_bytes);
    put(queue.tx_packets);
    put(queue.rx_packets);
    put(queue.handed_over);
  }
  void put(const PortRecord& port) {
    // The counter count first: a reader of another table size says so rather than misreading.
    put(uint32_t{dataplane::kPortCounterFields.size()});
    for (const dataplane::PortCounterField& field : dataplane::kPortCounterFields)
      put(port.*field.member);
    put(port.name);
    put(port.speed_bps);
    put(port.queues);
    put(port.absent);
    put(port.rate_limit_bps);
    put(port.rate_limited_by);
    put(port.host);
  }
  void put(const QpRecord& qp) {
    const transport::QpStats& stats = qp.stats;
    put(static_cast<uint8_t>(stats.role));
    put(stats.port);
    put(stats.remote_port);
    put(stats.qpn);
    put(stats.remote_qpn);
    // The counter count first, as for ports.
    put(uint32_t{transport::kQpCounterFields.size()});
    for (const transport::QpCounterField& field : transport::kQpCounterFields)
      put(stats.counters.*field.member);
    put(stats.rate_cuts);
    put(stats.min_rate_bps);
    put(stats.mean_rate_bps);
    put(stats.busy_ns);
    put(qp.known);
    put(qp.job);
    put(qp.rank);
    put(qp.peer);
    put(qp.qp_index);
  }
  void put(const FctPercentiles& fct) {
    put(fct.kind);
    put(fct.flows);
    put(fct.p50);
    put(fct.p90);
    put(fct.p99);
    put(fct.p999);
    put(fct.max);
  }
  void put(const RunResults& r) {
    put(r.status);
    put(r.diagnosis);
    put(r.run_name);
    put(r.config_file);
    put(r.config_digest);
    put(r.seed);
    put(r.topology);
    put(r.world_size);
    put(r.end_time);
    put(r.wall_clock);
    put(r.wall_seconds);
    put(r.events);
    put(r.goodput_bytes_per_second);
    put(r.jobs);
    put(r.collectives);
    put(r.iterations);
    put(r.ports);
    put(r.fct);
    put(r.qps_counted);
    put(r.qps);
    put(r.flows);
    put(r.failed_flows);
    put(r.flows_by_status);
    put(r.notes);
  }
  void put(const PartialResults& part) {
    put(part.results);
    put(part.fct_samples);
    put(part.members_here);
    put(part.ranks_here);
    put(part.ports_here);
    put(part.time_scale);
    put(part.time_shift);
    put(part.host);
    put(part.emulator);
  }

 private:
  void little_endian(uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }

  std::string out_;
};

// The fewest bytes an item of type T takes: the encoding of an empty one (no characters, no
// elements, no kind). A count is checked against it, so no count makes the reader allocate more
// than the bytes left could fill.
template <typename T>
size_t min_encoded_size() {
  static const size_t size = [] {
    Writer writer;
    writer.put(T{});
    return writer.size();
  }();
  return size;
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  [[noreturn]] void fail(std::string_view what) const {
    throw std::runtime_error(fmt::format("partial results: {} (in {}, at byte {} of {})", what,
                                         section_, pos_, bytes_.size()));
  }
  size_t remaining() const { return bytes_.size() - pos_; }

  // Names what is being read, for the messages of fail().
  class Section {
   public:
    Section(Reader& reader, const char* name) : reader_(reader), outer_(reader.section_) {
      reader.section_ = name;
    }
    ~Section() { reader_.section_ = outer_; }
    Section(const Section&) = delete;
    Section& operator=(const Section&) = delete;

   private:
    Reader& reader_;
    const char* outer_;
  };

  void get(uint8_t& value) { value = static_cast<uint8_t>(little_endian(1)); }
  void get(bool& value) {
    uint8_t byte = 0;
    get(byte);
    if (byte > 1) fail(fmt::format("a boolean of {}", byte));
    value = byte == 1;
  }
  void get(uint32_t& value) { value = static_cast<uint32_t>(little_endian(4)); }
  void get(int32_t& value) {
    value = static_cast<int32_t>(static_cast<uint32_t>(little_endian(4)));
  }
  void get(uint64_t& value) { value = little_endian(8); }
  void get(int64_t& value) { value = static_cast<int64_t>(little_endian(8)); }
  void get(double& value) { value = std::bit_cast<double>(little_endian(8)); }
  void get(std::string& text) {
    const uint64_t size = count(1);
    text.assign(bytes_.substr(pos_, size));
    pos_ += size;
  }
  void get(RunStatus& status) {
    uint8_t value = 0;
    get(value);
    if (value > static_cast<uint8_t>(RunStatus::kFailed))
      fail(fmt::format("a status of {}", value));
    status = static_cast<RunStatus>(value);
  }
  void get(collectives::Algorithm& algorithm) {
    uint8_t value = 0;
    get(value);
    if (value >= collectives::kAlgorithmCount) fail(fmt::format("an algorithm of {}", value));
    algorithm = static_cast<collectives::Algorithm>(value);
  }
  void get(collectives::CollectiveKind& kind) {
    bool has = false;
    get(has);
    kind.reset();
    if (!has) return;
    uint8_t value = 0;
    get(value);
    if (value >= trace::kCollectiveTypeCount) fail(fmt::format("a collective type of {}", value));
    kind = static_cast<trace::CollectiveType>(value);
  }
  template <typename T>
  void get(std::vector<T>& items) {
    const uint64_t size = count(min_encoded_size<T>());
    items.clear();
    items.reserve(size);
    for (uint64_t i = 0; i < size; ++i) {
      T item{};
      get(item);
      items.push_back(std::move(item));
    }
  }
  template <size_t N>
  void get(std::array<uint64_t, N>& items) {
    uint64_t size = 0;
    get(size);
    if (size != N) fail(fmt::format("{} entries where there are {}", size, N));
    for (uint64_t& item : items) get(item);
  }

  void get(JobSummary& job) {
    Section section(*this, "a job");
    get(job.name);
    get(job.trace);
    get(job.world_size);
    get(job.iterations);
    get(job.warmup_iterations);
    get(job.nodes_issued);
  }
  void get(CollectiveRecord& c) {
    Section section(*this, "a collective record");
    get(c.instance);
    get(c.job);
    get(c.kind);
    get(c.algorithm);
    get(c.group);
    get(c.sequence);
    get(c.group_size);
    get(c.tag);
    get(c.src);
    get(c.dst);
    get(c.trace_bytes);
    get(c.algbw_bytes);
    get(c.wire_bytes);
    get(c.iteration);
    get(c.warmup);
    get(c.first_arrival);
    get(c.last_arrival);
    get(c.end);
    get(c.flows);
    get(c.failed_flows);
  }
  void get(RankIteration& rank) {
    Section section(*this, "a rank's iteration");
    get(rank.start);
    get(rank.end);
    get(rank.compute_ns);
    get(rank.comm_ns);
    get(rank.exposed_comm_ns);
  }
  void get(IterationRecord& it) {
    Section section(*this, "an iteration record");
    get(it.job);
    get(it.iteration);
    get(it.warmup);
    get(it.start);
    get(it.end);
    get(it.ranks);
  }
  void get(PortQueueRecord& queue) {
    Section section(*this, "a port queue record");
    get(queue.queue);
    get(queue.lcore);
    get(queue.tx_bytes);
    get(queue.rx_bytes);
    get(queue.tx_packets);
    get(queue.rx_packets);
    get(queue.handed_over);
  }
  void get(PortRecord& port) {
    Section section(*this, "a port record");
    uint32_t counters = 0;
    get(counters);
    if (counters != dataplane::kPortCounterFields.size())
      fail(fmt::format("{} port counters where there are {}", counters,
                       dataplane::kPortCounterFields.size()));
    for (const dataplane::PortCounterField& field : dataplane::kPortCounterFields)
      get(port.*field.member);
    get(port.name);
    get(port.speed_bps);
    get(port.queues);
    get(port.absent);
    get(port.rate_limit_bps);
    get(port.rate_limited_by);
    get(port.host);
  }
  void get(QpRecord& qp) {
    Section section(*this, "a QP record");
    transport::QpStats& stats = qp.stats;
    uint8_t role = 0;
    get(role);
    if (role > static_cast<uint8_t>(transport::QpRole::kResponder))
      fail(fmt::format("a QP role of {}", role));
    stats.role = static_cast<transport::QpRole>(role);
    get(stats.port);
    get(stats.remote_port);
    get(stats.qpn);
    get(stats.remote_qpn);
    uint32_t counters = 0;
    get(counters);
    if (counters != transport::kQpCounterFields.size()) {
      fail(fmt::format("{} QP counters where there are {}", counters,
                       transport::kQpCounterFields.size()));
    }
    for (const transport::QpCounterField& field : transport::kQpCounterFields)
      get(stats.counters.*field.member);
    get(stats.rate_cuts);
    get(stats.min_rate_bps);
    get(stats.mean_rate_bps);
    get(stats.busy_ns);
    get(qp.known);
    get(qp.job);
    get(qp.rank);
    get(qp.peer);
    get(qp.qp_index);
  }
  void get(FctPercentiles& fct) {
    Section section(*this, "FCT percentiles");
    get(fct.kind);
    get(fct.flows);
    get(fct.p50);
    get(fct.p90);
    get(fct.p99);
    get(fct.p999);
    get(fct.max);
  }
  void get(RunResults& r) {
    Section section(*this, "the run results");
    get(r.status);
    get(r.diagnosis);
    get(r.run_name);
    get(r.config_file);
    get(r.config_digest);
    get(r.seed);
    get(r.topology);
    get(r.world_size);
    get(r.end_time);
    get(r.wall_clock);
    get(r.wall_seconds);
    get(r.events);
    get(r.goodput_bytes_per_second);
    get(r.jobs);
    get(r.collectives);
    get(r.iterations);
    get(r.ports);
    get(r.fct);
    get(r.qps_counted);
    get(r.qps);
    get(r.flows);
    get(r.failed_flows);
    get(r.flows_by_status);
    get(r.notes);
  }
  void get(PartialResults& part) {
    get(part.results);
    Section section(*this, "the process's part");
    get(part.fct_samples);
    get(part.members_here);
    if (part.members_here.size() != part.results.collectives.size()) {
      fail(fmt::format("{} member counts for {} collective instances", part.members_here.size(),
                       part.results.collectives.size()));
    }
    get(part.ranks_here);
    get(part.ports_here);
    get(part.time_scale);
    get(part.time_shift);
    get(part.host);
    get(part.emulator);
  }

 private:
  uint64_t little_endian(size_t bytes) {
    if (bytes > remaining()) fail("truncated");
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; ++i)
      value |= uint64_t{static_cast<uint8_t>(bytes_[pos_ + i])} << (8 * i);
    pos_ += bytes;
    return value;
  }
  // A count of items of at least `min_bytes` each, no more than the bytes left can hold.
  uint64_t count(size_t min_bytes) {
    uint64_t size = 0;
    get(size);
    if (size > remaining() / std::max<size_t>(min_bytes, 1))
      fail(fmt::format("a count of {} where {} bytes are left", size, remaining()));
    return size;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
  const char* section_ = "the header";
};

// ---- merging -------------------------------------------------------------------------------

void shift_times(RunResults& results, double scale, clock::Nanos shift) {
  if (scale == 1.0 && shift == 0) return;
  auto move = [&](clock::Nanos& t) { t = to_reference_time(t, scale, shift); };
  move(results.end_time);
  for (CollectiveRecord& c : results.collectives) {
    move(c.first_arrival);
    move(c.last_arrival);
    move(c.end);
  }
  for (IterationRecord& it : results.iterations) {
    move(it.start);
    move(it.end);
    for (RankIteration& rank : it.ranks) {
      move(rank.start);
      move(rank.end);
    }
  }
}

// Percentiles of the samples of every part, by kind index as the engine's finalize maps them.
std::vector<FctPercentiles> fct_from_samples(const std::vector<PartialResults>& parts) {
  std::vector<std::vector<clock::Nanos>> samples(kFctKinds);
  for (const PartialResults& part : parts) {
    for (size_t kind = 0; kind < part.fct_samples.size(); ++kind) {
      std::vector<clock::Nanos>& into = samples[std::min(kind, kFctKinds - 1)];
      into.insert(into.end(), part.fct_samples[kind].begin(), part.fct_samples[kind].end());
    }
  }
  std::vector<FctPercentiles> fct;
  for (size_t kind = 0; kind < samples.size(); ++kind) {
    if (samples[kind].empty()) continue;
    collectives::CollectiveKind which;
    if (kind < static_cast<size_t>(trace::kCollectiveTypeCount))
      which = static_cast<trace::CollectiveType>(kind);
    fct.push_back(fct_percentiles(which, samples[kind]));
  }
  return fct;
}

bool replays(const PartialResults& part, uint32_t job, int64_t rank) {
  if (job >= part.ranks_here.size() || rank < 0) return false;
  const std::vector<uint8_t>& ranks = part.ranks_here[job];
  return static_cast<uint64_t>(rank) < ranks.size() && ranks[static_cast<size_t>(rank)] != 0;
}

bool replays_any(const PartialResults& part, uint32_t job) {
  if (job >= part.ranks_here.size()) return false;
  const std::vector<uint8_t>& ranks = part.ranks_here[job];
  return std::any_of(ranks.begin(), ranks.end(), [](uint8_t here) { return here != 0; });
}

int severity(RunStatus status) {
  switch (status) {
    case RunStatus::kCompleted:
      return 0;
    case RunStatus::kFlowsFailed:
      return 1;
    case RunStatus::kInterrupted:
      return 2;
    case RunStatus::kStuck:
      return 3;
    case RunStatus::kFailed:
      return 4;
  }
  return 4;
}

using InstanceKey = std::tuple<uint32_t, int64_t, uint64_t, int32_t, int32_t, int32_t>;

InstanceKey instance_key(const CollectiveRecord& c) {
  return {c.job, c.group, c.sequence, c.tag, c.src, c.dst};
}

struct MergedInstance {
  CollectiveRecord record;
  uint64_t members = 0;      // members completed, over the parts that have the instance
  bool from_sender = false;  // point-to-point: last_arrival is the sender's part's
  std::vector<std::pair<size_t, uint64_t>> local_ids;  // (part, the part's instance number)
};

std::vector<CollectiveRecord> merge_collectives(const std::vector<PartialResults>& parts,
                                                std::vector<InstanceNumbers>* numbers) {
  std::map<InstanceKey, MergedInstance> instances;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto& collectives = parts[i].results.collectives;
    for (size_t n = 0; n < collectives.size(); ++n) {
      const CollectiveRecord& c = collectives[n];
      const bool p2p = c.group == kPointToPointGroup;
      const bool sender = p2p && replays(parts[i], c.job, c.src);
      auto [it, inserted] = instances.try_emplace(instance_key(c));
      MergedInstance& m = it->second;
      if (inserted) {
        m.record = c;
        m.from_sender = sender;
      } else {
        CollectiveRecord& r = m.record;
        r.first_arrival = std::min(r.first_arrival, c.first_arrival);
        r.end = std::max(r.end, c.end);
        r.flows += c.flows;
        r.failed_flows += c.failed_flows;
        r.wire_bytes += c.wire_bytes;
        // A SEND is issued on its sender's process; the receiver's record only saw the RECV.
        if (!p2p || (!sender && !m.from_sender)) {
          r.last_arrival = std::max(r.last_arrival, c.last_arrival);
        } else if (sender) {
          r.last_arrival = c.last_arrival;
          m.from_sender = true;
        }
      }
      m.members += n < parts[i].members_here.size() ? parts[i].members_here[n] : 0;
      m.local_ids.emplace_back(i, c.instance);
    }
  }

  // An instance some process did not complete (a stopped run) is not in the run's results.
  std::vector<CollectiveRecord> merged;
  std::vector<const MergedInstance*> origin;  // parallel to merged, until it is sorted
  for (auto& [key, m] : instances) {
    if (m.members < m.record.group_size) continue;
    merged.push_back(m.record);
    origin.push_back(&m);
  }
  // Each merged record carries its position in `origin` as its number until it is renumbered.
  for (size_t i = 0; i < merged.size(); ++i) merged[i].instance = i;
  // In order of completion, as one engine lists them; instances numbered by first arrival.
  auto by = [](auto time) {
    return [time](const CollectiveRecord& a, const CollectiveRecord& b) {
      return std::pair(time(a), instance_key(a)) < std::pair(time(b), instance_key(b));
    };
  };
  std::sort(merged.begin(), merged.end(), by([](const CollectiveRecord& c) { return c.end; }));
  std::vector<size_t> order(merged.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto by_arrival = by([](const CollectiveRecord& c) { return c.first_arrival; });
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return by_arrival(merged[a], merged[b]); });
  if (numbers != nullptr) numbers->assign(parts.size(), {});
  for (size_t n = 0; n < order.size(); ++n) {
    CollectiveRecord& record = merged[order[n]];
    if (numbers != nullptr) {
      for (const auto& [part, local] : origin[record.instance]->local_ids) {
        (*numbers)[part][local] = n;
      }
    }
    record.instance = n;
  }
  return merged;
}

std::vector<IterationRecord> merge_iterations(const std::vector<PartialResults>& parts) {
  struct MergedIteration {
    IterationRecord record;
    std::vector<bool> in_part;
  };
  std::map<std::pair<uint32_t, uint32_t>, MergedIteration> iterations;
  for (size_t i = 0; i < parts.size(); ++i) {
    for (const IterationRecord& it : parts[i].results.iterations) {
      auto [entry, inserted] = iterations.try_emplace(std::pair(it.job, it.iteration));
      MergedIteration& m = entry->second;
      if (inserted) {
        m.record = it;
        m.in_part.assign(parts.size(), false);
      } else {
        m.record.start = std::min(m.record.start, it.start);
        m.record.end = std::max(m.record.end, it.end);
        if (m.record.ranks.size() < it.ranks.size()) m.record.ranks.resize(it.ranks.size());
      }
      // A rank's share comes from the process that replays it; the others hold nothing for it.
      for (size_t r = 0; r < it.ranks.size(); ++r)
        if (replays(parts[i], it.job, static_cast<int64_t>(r))) m.record.ranks[r] = it.ranks[r];
      m.in_part[i] = true;
    }
  }
  std::vector<IterationRecord> merged;
  for (auto& [key, m] : iterations) {
    bool complete = true;
    for (size_t i = 0; i < parts.size() && complete; ++i)
      complete = m.in_part[i] || !replays_any(parts[i], key.first);
    if (complete) merged.push_back(std::move(m.record));
  }
  return merged;
}

std::vector<PortRecord> merge_ports(const std::vector<PartialResults>& parts) {
  size_t count = 0;
  for (const PartialResults& part : parts) count = std::max(count, part.results.ports.size());
  std::vector<PortRecord> ports;
  ports.reserve(count);
  for (size_t p = 0; p < count; ++p) {
    const PartialResults* owner = nullptr;
    for (const PartialResults& part : parts) {
      if (p < part.ports_here.size() && part.ports_here[p] != 0 && p < part.results.ports.size()) {
        owner = &part;
        break;
      }
    }
    if (owner != nullptr) {
      ports.push_back(owner->results.ports[p]);
      ports.back().host = owner->host;
      continue;
    }
    // Driven by no process (a port of the plan no emulator runs): as process 0 has it.
    for (const PartialResults& part : parts) {
      if (p < part.results.ports.size()) {
        ports.push_back(part.results.ports[p]);
        break;
      }
    }
  }
  return ports;
}

}  // namespace

std::string serialize_partial(const PartialResults& part) {
  Writer writer;
  writer.put(kMagic);
  writer.put(kVersion);
  writer.put(part);
  return writer.take();
}

PartialResults deserialize_partial(std::string_view bytes) {
  Reader reader(bytes);
  uint64_t magic = 0;
  reader.get(magic);
  if (magic != kMagic) reader.fail("not partial results (no magic)");
  uint32_t version = 0;
  reader.get(version);
  if (version != kVersion)
    reader.fail(fmt::format("version {} where {} is read", version, kVersion));
  PartialResults part;
  reader.get(part);
  if (reader.remaining() != 0)
    reader.fail(fmt::format("{} bytes after the end", reader.remaining()));
  return part;
}

RunResults merge_partials(std::vector<PartialResults> parts,
                          std::vector<InstanceNumbers>* numbers) {
  if (parts.empty()) throw std::invalid_argument("merge_partials: no partial results");
  for (PartialResults& part : parts) shift_times(part.results, part.time_scale, part.time_shift);
  if (parts.size() == 1) {
    if (numbers != nullptr) {
      numbers->assign(1, {});
      for (const CollectiveRecord& c : parts[0].results.collectives)
        (*numbers)[0][c.instance] = c.instance;
    }
    RunResults results = std::move(parts[0].results);
    results.fct = fct_from_samples(parts);
    return results;
  }

  const RunResults& first = parts[0].results;
  RunResults merged;
  merged.run_name = first.run_name;
  merged.config_file = first.config_file;
  merged.config_digest = first.config_digest;
  merged.seed = first.seed;
  merged.topology = first.topology;
  merged.world_size = first.world_size;
  merged.wall_clock = first.wall_clock;
  merged.goodput_bytes_per_second = first.goodput_bytes_per_second;
  merged.jobs = first.jobs;
  for (JobSummary& job : merged.jobs) job.nodes_issued = 0;
  merged.end_time = first.end_time;

  std::set<std::string> notes_seen;
  for (size_t i = 0; i < parts.size(); ++i) {
    const PartialResults& part = parts[i];
    const RunResults& r = part.results;
    for (size_t j = 0; j < merged.jobs.size() && j < r.jobs.size(); ++j)
      merged.jobs[j].nodes_issued += r.jobs[j].nodes_issued;
    merged.events += r.events;
    merged.flows += r.flows;
    merged.failed_flows += r.failed_flows;
    for (size_t s = 0; s < merged.flows_by_status.size(); ++s)
      merged.flows_by_status[s] += r.flows_by_status[s];
    merged.wall_seconds = std::max(merged.wall_seconds, r.wall_seconds);
    merged.end_time = std::max(merged.end_time, r.end_time);
    if (severity(r.status) > severity(merged.status)) merged.status = r.status;

    if (!r.diagnosis.empty()) {
      merged.diagnosis += part.emulator.empty()
                              ? fmt::format("process {} on {}:\n", i, part.host)
                              : fmt::format("emulator \"{}\" on {}:\n", part.emulator, part.host);
      merged.diagnosis += r.diagnosis;
      if (r.diagnosis.back() != '\n') merged.diagnosis += '\n';
    }
    // Processes on one host see the same devices and often report the same note once each.
    for (const std::string& note : r.notes) {
      std::string line = fmt::format("{}: {}", part.host, note);
      if (notes_seen.insert(line).second) merged.notes.push_back(std::move(line));
    }
  }

  merged.collectives = merge_collectives(parts, numbers);
  merged.iterations = merge_iterations(parts);
  merged.ports = merge_ports(parts);
  merged.fct = fct_from_samples(parts);
  // Each process counted the QP halves on its own ports: together, every half once. Counted
  // only when every process could count its own.
  merged.qps_counted = true;
  for (const PartialResults& part : parts) {
    merged.qps_counted = merged.qps_counted && part.results.qps_counted;
  }
  if (merged.qps_counted) {
    for (const PartialResults& part : parts) {
      merged.qps.insert(merged.qps.end(), part.results.qps.begin(), part.results.qps.end());
    }
  }
  return merged;
}

}  // namespace etwire::engine
