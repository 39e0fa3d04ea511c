#include "dataplane/verbs/verbs_data_plane.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "common/rate.h"
#include "nic/verbs/dcqcn_sysfs.h"
#include "nic/verbs/port_selection.h"
#include "nic/verbs/rdma_devices.h"

namespace etwire::dataplane {

using nic::verbs::VerbsCq;
using nic::verbs::VerbsDevice;
using nic::verbs::VerbsQp;

namespace {

// Completions taken from a queue per poll call.
constexpr int kBurst = 64;
// Entries of each device's completion queue: every send outstanding and every receive posted
// ahead must fit (64 B a entry on mlx5: 16 MiB a device).
constexpr int kCqEntries = 1 << 18;
// Failures quoted one by one in the notes; the summary counts the rest by status.
constexpr size_t kQuotedFailures = 16;
// RoCE's traffic class carries DSCP in its upper six bits.
constexpr int kDscpShift = 2;
// The RNR timer a receiver asks for (IB encoding 12: 0.64 ms), as perftest's default.
constexpr uint8_t kMinRnrTimer = 12;

transport::FlowStatus flow_status(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_SUCCESS:
      return transport::FlowStatus::kCompleted;
    case IBV_WC_RETRY_EXC_ERR:
      return transport::FlowStatus::kRetryExceeded;
    case IBV_WC_WR_FLUSH_ERR:
      return transport::FlowStatus::kFlushed;
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return transport::FlowStatus::kRnrRetryExceeded;
    case IBV_WC_REM_ACCESS_ERR:
      return transport::FlowStatus::kRemoteAccessError;
    case IBV_WC_REM_INV_REQ_ERR:
      return transport::FlowStatus::kRemoteInvalidRequest;
    case IBV_WC_REM_OP_ERR:
      return transport::FlowStatus::kRemoteOperationError;
    case IBV_WC_LOC_LEN_ERR:
      return transport::FlowStatus::kLocalLengthError;
    case IBV_WC_LOC_PROT_ERR:
      return transport::FlowStatus::kLocalProtectionError;
    case IBV_WC_LOC_QP_OP_ERR:
      return transport::FlowStatus::kLocalQpOperationError;
    default:
      return transport::FlowStatus::kDeviceError;
  }
}

// The IB timeout exponent nearest to a retransmission timeout: 4.096 us x 2^exponent.
uint8_t timeout_exponent(uint64_t timeout_ns) {
  const double exponent = std::log2(static_cast<double>(timeout_ns) / 4096.0);
  return static_cast<uint8_t>(std::clamp(std::lround(exponent), 1L, 31L));
}

std::array<uint8_t, 16> address_gid(const config::PortConfig& port, uint8_t ip_version) {
  std::array<uint8_t, 16> gid{};
  if (ip_version == 6 && port.ipv6) return port.ipv6->bytes;
  gid[10] = 0xff;
  gid[11] = 0xff;
  for (int i = 0; i < 4; ++i) gid[12 + i] = static_cast<uint8_t>(port.ipv4.value >> (24 - 8 * i));
  return gid;
}

std::string address_text(const config::PortConfig& port, uint8_t ip_version) {
  if (ip_version == 6 && port.ipv6) return port.ipv6->to_string() + " (ipv6)";
  return port.ipv4.to_string() + " (ipv4)";
}

// The YAML key of a DcqcnConfig member: its name without the unit suffix.
std::string dcqcn_key(std::string_view member) {
  for (std::string_view unit : {"_ns", "_bps"}) {
    if (member.ends_with(unit)) return std::string(member.substr(0, member.size() - unit.size()));
  }
  return std::string(member);
}

bool needs_receives(config::RdmaOp op) {
  return op != config::RdmaOp::kWrite;
}

// Ports of another emulator process have no device here.
constexpr size_t kElsewhere = std::numeric_limits<size_t>::max();

std::string gid_hex(const ibv_gid& gid) {
  std::string hex;
  for (uint8_t byte : gid.raw) hex += fmt::format("{:02x}", byte);
  return hex;
}

bool parse_gid(const std::string& hex, ibv_gid& gid) {
  if (hex.size() != 2 * sizeof(gid.raw)) return false;
  for (size_t i = 0; i < sizeof(gid.raw); ++i) {
    char* end = nullptr;
    const std::string byte = hex.substr(2 * i, 2);
    gid.raw[i] = static_cast<uint8_t>(std::strtoul(byte.c_str(), &end, 16));
    if (end != byte.c_str() + 2) return false;
  }
  return true;
}

}  // namespace

struct VerbsDataPlane::Device {
  std::unique_ptr<VerbsDevice> device;
  std::unique_ptr<VerbsCq> cq;  // the sends and receives of every QP on the device
  std::unique_ptr<uint8_t, decltype(&std::free)> buffer{nullptr, &std::free};
  nic::verbs::MemoryRegion region;
  int cq_load = 0;    // completions the queue may still have to take: sends out, receives posted
  bool lost = false;  // its queue overran: no completion comes out of it again
  // By the device's QP number: connection index x 2, + 1 for a responder.
  std::unordered_map<uint32_t, uint32_t> qps;
};

struct VerbsDataPlane::Port {
  size_t device = kElsewhere;
  uint8_t number = 1;
  ibv_gid_entry gid{};
  std::vector<std::pair<std::string, uint64_t>> baseline;  // counters at start()
  uint32_t absent = 0;
  uint64_t rate_limit_bps = 0;
  std::string rate_limited_by;
  // How its sending QPs came out under the limit, and the one note that says so.
  bool held_by_rnic = false;
  bool paced_by_posting = false;
  int refusal = 0;  // the errno of the RNIC's refusal, for the note
  size_t rate_note = 0;
};

namespace {

struct Message {
  uint64_t bytes = 0;
  uint64_t unposted_bytes = 0;
  uint32_t unposted_wrs = 0;
  uint32_t outstanding_wrs = 0;
  transport::FlowTags tags;
  clock::Nanos first_out = clock::kNever;
  clock::Nanos sent_at = clock::kNever;  // its last work request completed
  transport::FlowStatus status = transport::FlowStatus::kCompleted;
};

}  // namespace

struct VerbsDataPlane::Connection {
  uint32_t index = 0;
  uint32_t plan_requester = 0;
  uint32_t plan_responder = 0;
  uint32_t src_port = 0;
  uint32_t dst_port = 0;
  uint16_t udp_source_port = 0;
  // Split runs: only the halves whose ports this process drives.
  std::unique_ptr<VerbsQp> requester;
  std::unique_ptr<VerbsQp> responder;
  // Where a WRITE lands: the responder device's buffer.
  uint64_t remote_address = 0;
  uint32_t remote_rkey = 0;
  RingQueue<Message> messages;  // posted by the engine, not yet finished; oldest first
  size_t posting = 0;           // index in `messages` of the first with work left to post
  uint32_t outstanding = 0;     // work requests posted, not completed
  bool failed = false;          // the requester QP is in error
  // SEND: the work requests of each message whose delivery is awaited, and how many of the
  // first one's have arrived.
  RingQueue<uint32_t> awaited_wrs;
  uint32_t received_wrs = 0;
  uint32_t receives_posted = 0;
  // Messages seen delivered, and handed to the join: with receives, a message sent in full waits
  // for its delivery, so that a responder lost before then can still fail it.
  uint64_t deliveries = 0;
  uint64_t settled = 0;
  // Paced posting, when the device has no per-QP limiter.
  uint64_t pace_bps = 0;
  clock::Nanos next_post = 0;
  bool post_scheduled = false;
};

// Between the flow join and the engine: flow records carry the QP numbers the device gave, which
// are the ones on the wire (the join keys connections by the plan's numbers).
class VerbsDataPlane::DeviceQpNumbers final : public transport::FlowObserver {
 public:
  explicit DeviceQpNumbers(transport::FlowObserver& engine) : engine_(engine) {}
  void add(uint32_t plan_requester, uint32_t requester, uint32_t responder) {
    if (plan_requester >= numbers_.size()) numbers_.resize(plan_requester + 1);
    numbers_[plan_requester] = {requester, responder};
  }
  void on_flow_delivered(const transport::FlowRecord& record) override {
    engine_.on_flow_delivered(renumbered(record));
  }
  void on_flow_finished(const transport::FlowRecord& record) override {
    engine_.on_flow_finished(renumbered(record));
  }
  // Messages posted in another process: the engine knows their senders by the plan's numbers.
  void on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now, uint32_t ecn_marks,
                                 uint32_t immediate) override {
    engine_.on_delivered_to_responder(requester_qpn, now, ecn_marks, immediate);
  }
  uint32_t requester_of(uint32_t plan_requester) const { return numbers_.at(plan_requester).first; }

 private:
  transport::FlowRecord renumbered(transport::FlowRecord record) const {
    const auto& [requester, responder] = numbers_.at(record.qpn);
    record.qpn = requester;
    record.dest_qpn = responder;
    return record;
  }
  transport::FlowObserver& engine_;
  std::vector<std::pair<uint32_t, uint32_t>> numbers_;
};

VerbsDataPlane::VerbsDataPlane(const config::RunConfig& config, transport::FlowObserver& observer,
                               std::unique_ptr<nic::verbs::VerbsProvider> provider,
                               clock::VirtualClock* virtual_clock, RnicHostPaths paths,
                               const cluster::Session* processes)
    : config_(config),
      provider_(std::move(provider)),
      numbers_(std::make_unique<DeviceQpNumbers>(observer)),
      join_(*numbers_),
      virtual_clock_(virtual_clock),
      paths_(std::move(paths)),
      completions_(kBurst) {
  if (virtual_clock == nullptr) {
    wall_ = std::make_unique<clock::WallClock>();
    clock_ = wall_.get();
  } else {
    clock_ = virtual_clock;
  }
  here_.assign(config.ports.size(), true);
  if (processes != nullptr && processes->size() > 1 && config.emulators.size() > 1) {
    processes_ = processes;
    for (size_t p = 0; p < config.ports.size(); ++p) {
      here_[p] =
          config::drives_port(config, config.ports[p], static_cast<uint32_t>(processes->rank()));
    }
  }
  // A device's own DCQCN settings exist on the wall clock: a real RNIC, or one that stands in
  // for it in tests; not on the software RNIC's virtual clock or across processes.
  const bool device_dcqcn =
      wall_ && !(config.verbs.rnic == config::RnicKind::kSoftware && processes_ != nullptr);
  const uint64_t buffer_bytes = config.verbs.max_message;
  std::vector<std::string> device_names;
  for (size_t index = 0; index < config.ports.size(); ++index) {
    const config::PortConfig& port = config.ports[index];
    if (port.backend != config::Backend::kVerbs) {
      throw std::invalid_argument(fmt::format(
          "{}: port \"{}\" ({}) uses the {} backend; a verbs run drives verbs ports only",
          config.source_file, port.name, port.key_path, config::backend_name(port.backend)));
    }
    auto p = std::make_unique<Port>();
    if (!here_[index]) {  // another emulator process opens its device
      ports_.push_back(std::move(p));
      continue;
    }
    p->number = port.verbs.port;
    auto known = std::find(device_names.begin(), device_names.end(), port.verbs.device);
    p->device = static_cast<size_t>(known - device_names.begin());
    if (known == device_names.end()) {
      auto device = std::make_unique<Device>();
      device->device = provider_->open(port.verbs.device);
      device->cq = device->device->create_cq(kCqEntries);
      // One buffer per device, page-aligned as registration prefers; its contents do not matter.
      device->buffer.reset(
          static_cast<uint8_t*>(std::aligned_alloc(4096, (buffer_bytes + 4095) & ~uint64_t{4095})));
      if (!device->buffer) throw std::bad_alloc();
      std::memset(device->buffer.get(), 0x5a, buffer_bytes);
      device->region = device->device->register_memory(
          device->buffer.get(), buffer_bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
      device_names.push_back(port.verbs.device);
      devices_.push_back(std::move(device));
    }
    try {
      const nic::verbs::SelectedPort selected = nic::verbs::select_port(
          *devices_[p->device]->device, p->number, port.verbs.gid_index,
          address_gid(port, config.transport.ip_version),
          address_text(port, config.transport.ip_version), config.transport.pmtu);
      p->gid = selected.gid;
      const uint64_t reported =
          nic::verbs::port_speed_bps(selected.attr.active_speed, selected.attr.active_width);
      if (reported != 0 && reported != port.speed_bps) {
        notes_.push_back(fmt::format(
            "{}: {} port {} runs at {} but the configuration says {}: ideal % and line-rate "
            "times use the configuration's speed",
            port.name, port.verbs.device, p->number, format_rate(reported),
            format_rate(port.speed_bps)));
      }
    } catch (const nic::verbs::PortRefused& e) {
      throw std::runtime_error(
          fmt::format("port \"{}\" ({}): {}", port.name, port.key_path, e.what()));
    }
    notes_.push_back(fmt::format("{}: {} port {}, GID {}: {}", port.name, port.verbs.device,
                                 p->number, p->gid.gid_index,
                                 address_text(port, config.transport.ip_version)));
    if (device_dcqcn) check_dcqcn(port, *p);
    ports_.push_back(std::move(p));
  }
  if (!device_dcqcn) {
    notes_.push_back(
        "the software RNIC runs DCQCN, pacing and retransmission in etwire's transport, with "
        "transport.dcqcn as configured: verbs.dcqcn has no device settings to read back or apply");
  }
  const uint64_t timeout = config.transport.retransmit_timeout_ns;
  const uint8_t exponent = timeout_exponent(timeout);
  const double exact = 4096.0 * std::pow(2.0, exponent);
  if (std::abs(exact - static_cast<double>(timeout)) > 1.0) {
    notes_.push_back(fmt::format(
        "transport.retransmit_timeout {} ns is not 4.096 us x 2^n: the queue pairs use timeout "
        "{} ({:.0f} ns)",
        timeout, exponent, exact));
  }
  // Counters from here on; start() takes them again when the run begins.
  for (size_t p = 0; p < ports_.size(); ++p) {
    Port& port = *ports_[p];
    if (port.device == kElsewhere) continue;
    port.baseline = devices_[port.device]->device->read_counters(port.number);
    for (size_t f = 0; f < kPortCounterFields.size(); ++f) {
      const bool exposed =
          std::any_of(port.baseline.begin(), port.baseline.end(),
                      [&](const auto& item) { return item.first == kPortCounterFields[f].name; });
      if (!exposed) port.absent |= port_counter_bit(f);
    }
  }
}

std::vector<std::string> VerbsDataPlane::notes() const {
  std::vector<std::string> all = notes_;
  for (const auto& source : note_sources_) {
    for (std::string& note : source()) all.push_back(std::move(note));
  }
  return all;
}

VerbsDataPlane::~VerbsDataPlane() {
  // Queue pairs before the completion queues and devices they are on.
  connections_.clear();
}

void VerbsDataPlane::check_dcqcn(const config::PortConfig& port, const Port& p) {
  nic::verbs::DcqcnSysfs sysfs(paths_.infiniband, paths_.net, port.verbs.device, p.number,
                               p.gid.gid_index, port.qos.data.priority);
  if (!sysfs.available()) {
    notes_.push_back(fmt::format(
        "{}: the DCQCN settings of {} port {} can be neither read nor applied ({}); the device "
        "runs its own",
        port.name, port.verbs.device, p.number, sysfs.why_unavailable()));
    return;
  }
  if (port.verbs.dcqcn == config::VerbsDcqcn::kApply) {
    for (const std::string& failure : sysfs.apply(config_.transport.dcqcn)) {
      notes_.push_back(fmt::format("{}: DCQCN not applied: {}", port.name, failure));
    }
  }
  std::string differences;
  for (const nic::verbs::DcqcnSetting& setting : sysfs.read_back(config_.transport.dcqcn)) {
    if (setting.device_value == setting.wanted) continue;
    differences += fmt::format(
        "{}{} {} (transport.dcqcn.{} wants {})", differences.empty() ? "" : ", ", setting.file,
        setting.device_value ? std::to_string(*setting.device_value) : std::string("unreadable"),
        dcqcn_key(setting.field), setting.wanted);
  }
  notes_.push_back(differences.empty()
                       ? fmt::format("{}: DCQCN on {} ({}) matches transport.dcqcn", port.name,
                                     port.verbs.device, sysfs.netdev())
                       : fmt::format("{}: DCQCN on {} ({}) differs from transport.dcqcn: {}",
                                     port.name, port.verbs.device, sysfs.netdev(), differences));
}

clock::Nanos VerbsDataPlane::next_event_time() const {
  return wall_ ? wall_->now() : virtual_clock_->next_event_time();
}

void VerbsDataPlane::start() {
  if (wall_) wall_->restart();
  for (auto& port : ports_) {
    if (port->device == kElsewhere) continue;
    port->baseline = devices_[port->device]->device->read_counters(port->number);
  }
}

uint32_t VerbsDataPlane::recorded_requester_qpn(uint32_t plan_qpn) const {
  return numbers_->requester_of(plan_qpn);
}

std::string VerbsDataPlane::ports_between(uint32_t from, uint32_t to) const {
  return fmt::format("ports \"{}\" -> \"{}\"", config_.ports[from].name, config_.ports[to].name);
}

std::runtime_error VerbsDataPlane::modify_failed(const nic::verbs::VerbsQp& qp, const Port& port,
                                                 const char* state, int error,
                                                 const Connection& c) const {
  return std::runtime_error(
      fmt::format("{} port {}: ibv_modify_qp of QP 0x{:x} to {} failed: {} (connection of {})",
                  devices_[port.device]->device->name(), port.number, qp.qp_num(), state,
                  nic::verbs::errno_text(error), ports_between(c.src_port, c.dst_port)));
}

VerbsDataPlane::Device* VerbsDataPlane::device_of(size_t port) const {
  const size_t device = ports_.at(port)->device;
  return device == kElsewhere ? nullptr : devices_[device].get();
}

VerbsDataPlane::Connection& VerbsDataPlane::connection_of(uint32_t requester_qpn) {
  return *connections_.at(connection_of_requester_.at(requester_qpn));
}

// One half's facts, as its peer needs them to connect to it.
struct VerbsDataPlane::PeerFacts {
  uint32_t qpn = 0;
  ibv_gid gid{};
  uint32_t psn = 0;
  uint64_t address = 0;  // a responder's buffer, where WRITEs land
  uint32_t rkey = 0;
};

transport::ConnectionId VerbsDataPlane::connect(const WireConnection& connection) {
  const WireEndpoint& from = connection.requester;
  const WireEndpoint& to = connection.responder;
  const bool requester_here = here_.at(from.port);
  const bool responder_here = here_.at(to.port);
  const std::string between = ports_between(from.port, to.port);
  if (!requester_here && !responder_here) {
    throw std::invalid_argument(fmt::format(
        "the connection of {}: neither port is driven by this emulator process", between));
  }
  if (finished_connecting_ && !(requester_here && responder_here)) {
    throw std::logic_error(fmt::format(
        "the connection of {} was opened after the emulator processes exchanged their QPs: a "
        "split run opens every connection between processes from the traffic plan",
        between));
  }
  join_.add_connection(from.port, from.qpn, to.port, to.qpn,
                       requester_here && responder_here ? HalvesHere::kBoth
                       : requester_here                 ? HalvesHere::kRequester
                                                        : HalvesHere::kResponder);
  auto owned = std::make_unique<Connection>();
  Connection& c = *owned;
  c.index = static_cast<uint32_t>(connections_.size());
  c.plan_requester = from.qpn;
  c.plan_responder = to.qpn;
  c.src_port = from.port;
  c.dst_port = to.port;
  c.udp_source_port = connection.udp_source_port;
  connections_.push_back(std::move(owned));
  const config::VerbsConfig& verbs = config_.verbs;
  const bool receives = needs_receives(config_.transport.op);

  ibv_qp_cap sending{};
  sending.max_send_wr = verbs.queue_depth;
  sending.max_send_sge = 1;
  ibv_qp_cap receiving{};
  receiving.max_send_wr = 1;
  receiving.max_recv_wr = receives ? verbs.queue_depth : 0;
  receiving.max_recv_sge = 1;
  // Connections open before the run's traffic: a device refusing one stops the run, in words
  // that name the device, the port, the QP and the call.
  auto create = [&](uint32_t port, ibv_qp_cap& caps, const char* role) {
    Device& device = *device_of(port);
    try {
      return device.device->create_qp(*device.cq, *device.cq, caps);
    } catch (const nic::verbs::VerbsError& e) {
      throw std::runtime_error(fmt::format("{} port {}: the {} QP of the connection of {}: {}",
                                           device.device->name(), ports_[port]->number, role,
                                           between, e.what()));
    }
  };
  auto to_init = [&](VerbsQp& qp, uint32_t port) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = ports_[port]->number;
    attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    if (int e =
            qp.modify(attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
        e != 0) {
      throw modify_failed(qp, *ports_[port], "INIT", e, c);
    }
  };
  if (requester_here) {
    c.requester = create(from.port, sending, "requester");
    to_init(*c.requester, from.port);
  }
  if (responder_here) {
    c.responder = create(to.port, receiving, "responder");
    to_init(*c.responder, to.port);
  }
  if (requester_here && responder_here) {
    complete_connection(c, local_facts(c, true), local_facts(c, false));
  } else {
    unfinished_.push_back(c.index);
  }
  return {from.qpn, to.qpn};
}

VerbsDataPlane::PeerFacts VerbsDataPlane::local_facts(const Connection& c, bool requester) const {
  const uint32_t port = requester ? c.src_port : c.dst_port;
  const Device& device = *device_of(port);
  PeerFacts facts;
  facts.qpn = (requester ? c.requester : c.responder)->qp_num();
  facts.gid = ports_[port]->gid.gid;
  facts.psn = config_.verbs.start_psn;
  facts.address = device.region.address;
  facts.rkey = device.region.rkey;
  return facts;
}

void VerbsDataPlane::finish_connecting() {
  finished_connecting_ = true;
  // In one process every connection was completed when it was opened.
  if (processes_ == nullptr) return;
  // One line per half held here: its plan requester number, its side, and its facts.
  std::string mine;
  for (uint32_t index : unfinished_) {
    const Connection& c = *connections_[index];
    const bool requester = c.requester != nullptr;
    const PeerFacts f = local_facts(c, requester);
    mine += fmt::format("{} {} {} {} {} {} {}\n", c.plan_requester,
                        requester ? "requester" : "responder", f.qpn, gid_hex(f.gid), f.psn,
                        f.address, f.rkey);
  }
  const std::vector<std::string> all = processes_->all_gather(mine);
  std::map<std::pair<uint32_t, bool>, PeerFacts> announced;  // (plan requester, is requester)
  for (size_t process = 0; process < all.size(); ++process) {
    std::istringstream lines(all[process]);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream fields(line);
      uint32_t plan = 0;
      std::string side;
      std::string gid;
      PeerFacts f;
      if (!(fields >> plan >> side >> f.qpn >> gid >> f.psn >> f.address >> f.rkey) ||
          !parse_gid(gid, f.gid)) {
        throw std::runtime_error(fmt::format(
            "emulator process {} announced a QP this process cannot read: \"{}\"", process, line));
      }
      announced[{plan, side == "requester"}] = f;
    }
  }
  for (uint32_t index : unfinished_) {
    Connection& c = *connections_[index];
    const bool requester = c.requester != nullptr;
    auto peer = announced.find({c.plan_requester, !requester});
    if (peer == announced.end()) {
      throw std::runtime_error(fmt::format(
          "the connection of {}: no emulator process announced its {} QP; the processes do not "
          "agree on the traffic plan",
          ports_between(c.src_port, c.dst_port), requester ? "responder" : "requester"));
    }
    const PeerFacts here = local_facts(c, requester);
    complete_connection(c, requester ? here : peer->second, requester ? peer->second : here);
  }
  if (!unfinished_.empty()) {
    notes_.push_back(fmt::format(
        "{} connection(s) between this process's ports and other processes' were completed with "
        "the QP numbers, GIDs, PSNs and rkeys the processes exchanged over MPI",
        unfinished_.size()));
  }
  unfinished_.clear();
}

void VerbsDataPlane::complete_connection(Connection& c, const PeerFacts& requester,
                                         const PeerFacts& responder) {
  const config::VerbsConfig& verbs = config_.verbs;
  const bool receives = needs_receives(config_.transport.op);
  const std::string between = ports_between(c.src_port, c.dst_port);
  auto to_rtr = [&](VerbsQp& qp, const Port& port, const PeerFacts& peer,
                    const config::PortConfig& settings) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = nic::verbs::path_mtu_code(config_.transport.pmtu);
    attr.dest_qp_num = peer.qpn;
    attr.rq_psn = peer.psn;  // the PSN the peer starts sending with
    attr.max_dest_rd_atomic = 1;
    attr.min_rnr_timer = kMinRnrTimer;
    attr.ah_attr.is_global = 1;
    attr.ah_attr.port_num = port.number;
    attr.ah_attr.sl = settings.qos.data.priority;
    attr.ah_attr.grh.dgid = peer.gid;
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(port.gid.gid_index);
    attr.ah_attr.grh.hop_limit = 64;
    // DSCP in the upper six bits, the configured ECN codepoint (ECT(0) by default) in the lower
    // two, as perftest's --tclass takes them.
    attr.ah_attr.grh.traffic_class = static_cast<uint8_t>(
        settings.qos.data.dscp << kDscpShift | static_cast<uint8_t>(settings.qos.data.ecn));
    // RoCE devices derive the UDP source port from the flow label, as 0xC000 | (low 14 bits ^
    // the 6 above): a label of the port's low 14 bits gives the plan's port itself for the
    // default pool (49152 .. 65535), and a port per connection for any other.
    attr.ah_attr.grh.flow_label = c.udp_source_port & 0x3FFFu;
    if (int e =
            qp.modify(attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
        e != 0) {
      throw modify_failed(qp, port, "RTR", e, c);
    }
  };
  auto to_rts = [&](VerbsQp& qp, const Port& port) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = verbs.start_psn;
    attr.timeout = timeout_exponent(config_.transport.retransmit_timeout_ns);
    attr.retry_cnt = static_cast<uint8_t>(config_.transport.retry_count);
    attr.rnr_retry = verbs.rnr_retry;
    attr.max_rd_atomic = 1;
    if (int e = qp.modify(attr, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
        e != 0) {
      throw modify_failed(qp, port, "RTS", e, c);
    }
  };
  Port& src = *ports_[c.src_port];
  Port& dst = *ports_[c.dst_port];
  // The receiving side first: it must be ready before anything is sent to it.
  if (c.responder) to_rtr(*c.responder, dst, requester, config_.ports[c.dst_port]);
  if (c.requester) to_rtr(*c.requester, src, responder, config_.ports[c.src_port]);
  if (c.responder) to_rts(*c.responder, dst);
  if (c.requester) to_rts(*c.requester, src);
  c.remote_address = responder.address;
  c.remote_rkey = responder.rkey;

  Device* src_device = device_of(c.src_port);
  Device* dst_device = device_of(c.dst_port);
  if (receives && c.responder) {
    if (dst_device->cq_load + static_cast<int>(verbs.queue_depth) > dst_device->cq->capacity()) {
      throw std::runtime_error(fmt::format(
          "{} port {}: its completion queue ({} entries) cannot take the receives of one more "
          "connection ({}); lower verbs.queue_depth ({})",
          dst_device->device->name(), dst.number, dst_device->cq->capacity(), between,
          verbs.queue_depth));
    }
    for (uint32_t r = 0; r < verbs.queue_depth; ++r) {
      ibv_sge sge{dst_device->region.address, static_cast<uint32_t>(dst_device->region.length),
                  dst_device->region.lkey};
      ibv_recv_wr wr{};
      wr.wr_id = c.index;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      ibv_recv_wr* bad = nullptr;
      if (int e = c.responder->post_recv(&wr, &bad); e != 0) {
        throw std::runtime_error(
            fmt::format("{} port {}: ibv_post_recv on QP 0x{:x} failed: {} (connection of {})",
                        dst_device->device->name(), dst.number, c.responder->qp_num(),
                        nic::verbs::errno_text(e), between));
      }
      ++dst_device->cq_load;
      ++c.receives_posted;
    }
  }
  if (c.requester) apply_rate_limit(c, src);
  // A device whose completion queue is gone takes no new work: what is posted here is flushed.
  c.failed =
      (src_device != nullptr && src_device->lost) || (dst_device != nullptr && dst_device->lost);
  if (c.requester) src_device->qps[c.requester->qp_num()] = c.index * 2;
  if (c.responder) dst_device->qps[c.responder->qp_num()] = c.index * 2 + 1;
  numbers_->add(c.plan_requester, requester.qpn, responder.qpn);
  if (c.requester) {
    if (c.plan_requester >= connection_of_requester_.size()) {
      connection_of_requester_.resize(c.plan_requester + 1);
    }
    connection_of_requester_[c.plan_requester] = c.index;
  }
}

void VerbsDataPlane::apply_rate_limit(Connection& c, Port& port) {
  const config::PortConfig& settings = config_.ports[c.src_port];
  if (!settings.verbs.rate_limit_bps) return;
  const uint64_t bps = *settings.verbs.rate_limit_bps;
  const int error = c.requester->set_rate_limit(static_cast<uint32_t>(bps / 1000));
  if (error != 0 && error != EOPNOTSUPP && error != EINVAL) {
    throw std::runtime_error(
        fmt::format("{} port {}: ibv_modify_qp_rate_limit on QP 0x{:x} failed: {}",
                    devices_[port.device]->device->name(), port.number, c.requester->qp_num(),
                    nic::verbs::errno_text(error)));
  }
  const bool by_rnic = error == 0;
  if (!by_rnic) {
    c.pace_bps = bps;
    port.refusal = error;
  }
  bool& seen = by_rnic ? port.held_by_rnic : port.paced_by_posting;
  if (seen) return;
  seen = true;
  port.rate_limit_bps = bps;
  // One note per port, rewritten if its QPs come out both ways.
  std::string note;
  if (port.held_by_rnic && port.paced_by_posting) {
    port.rate_limited_by = "rnic+posting";
    note = fmt::format(
        "{}: per-QP rate limit {} held by the RNIC on some of its QPs "
        "(ibv_modify_qp_rate_limit); the RNIC refused it on others ({}), whose posting etwire "
        "paces to {} per QP (bursts of verbs.max_message at line rate)",
        settings.name, format_rate(bps), std::strerror(port.refusal), format_rate(bps));
  } else if (by_rnic) {
    port.rate_limited_by = "rnic";
    note = fmt::format("{}: per-QP rate limit {} held by the RNIC (ibv_modify_qp_rate_limit)",
                       settings.name, format_rate(bps));
  } else {
    port.rate_limited_by = "posting";
    note = fmt::format(
        "{}: the RNIC refused a per-QP rate limit ({}): etwire paces the posting of work requests "
        "to {} per QP instead (bursts of verbs.max_message at line rate)",
        settings.name, std::strerror(error), format_rate(bps));
  }
  if (port.rate_limited_by == "rnic+posting") {
    notes_[port.rate_note] = std::move(note);
  } else {
    port.rate_note = notes_.size();
    notes_.push_back(std::move(note));
  }
}

void VerbsDataPlane::post(transport::ConnectionId connection, uint64_t bytes,
                          const transport::FlowTags& tags) {
  Connection& c = connection_of(connection.requester);
  join_.posted(c.plan_requester, bytes, tags, clock_->now());
  Message m;
  m.bytes = bytes;
  m.unposted_bytes = bytes;
  const uint64_t max = config_.verbs.max_message;
  m.unposted_wrs = static_cast<uint32_t>(std::max<uint64_t>(1, (bytes + max - 1) / max));
  m.tags = tags;
  if (config_.transport.op == config::RdmaOp::kSend) c.awaited_wrs.push_back(m.unposted_wrs);
  c.messages.push_back(m);
  post_work(c);
}

void VerbsDataPlane::post_work(Connection& c) {
  if (c.failed) {
    settle(c);
    return;
  }
  Device& device = *devices_[ports_[c.src_port]->device];
  const config::RdmaOp op = config_.transport.op;
  while (c.posting < c.messages.size()) {
    Message& m = c.messages[c.posting];
    if (c.outstanding >= config_.verbs.queue_depth || device.cq_load >= device.cq->capacity()) {
      return;
    }
    const clock::Nanos now = clock_->now();
    if (c.pace_bps != 0 && now < c.next_post) {
      if (!c.post_scheduled) {
        c.post_scheduled = true;
        clock_->run_at(c.next_post, this, c.index);
      }
      return;
    }
    const uint64_t bytes = std::min(m.unposted_bytes, config_.verbs.max_message);
    const bool last = m.unposted_wrs == 1;
    ibv_sge sge{device.region.address, static_cast<uint32_t>(bytes), device.region.lkey};
    ibv_send_wr wr{};
    wr.wr_id = c.index;
    wr.sg_list = &sge;
    wr.num_sge = bytes == 0 ? 0 : 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (op == config::RdmaOp::kSend) {
      wr.opcode = IBV_WR_SEND;
    } else {
      wr.opcode = op == config::RdmaOp::kWriteWithImmediate && last ? IBV_WR_RDMA_WRITE_WITH_IMM
                                                                    : IBV_WR_RDMA_WRITE;
      wr.wr.rdma.remote_addr = c.remote_address;
      wr.wr.rdma.rkey = c.remote_rkey;
      // A receiver in another process tells messages apart by the engine's wire tag.
      wr.imm_data = m.tags.wire_tag != 0 ? m.tags.wire_tag : c.plan_requester;
    }
    ibv_send_wr* bad = nullptr;
    if (int e = c.requester->post_send(&wr, &bad); e != 0) {
      if (quote_failure()) {
        notes_.push_back(fmt::format(
            "{}, {} QP 0x{:x}: ibv_post_send failed: {}; the connection takes no more work: the "
            "flow refused fails (device-error), those behind it are flushed",
            ports_between(c.src_port, c.dst_port), device.device->name(), c.requester->qp_num(),
            nic::verbs::errno_text(e)));
      }
      fail_connection(c, c.posting, QpAfterFailure::kLeave);
      return;
    }
    if (m.first_out == clock::kNever) m.first_out = now;
    m.unposted_bytes -= bytes;
    --m.unposted_wrs;
    ++m.outstanding_wrs;
    ++c.outstanding;
    ++device.cq_load;
    if (c.pace_bps != 0) {
      const auto spacing = static_cast<clock::Nanos>(static_cast<double>(bytes) * 8e9 /
                                                     static_cast<double>(c.pace_bps));
      c.next_post = std::max(c.next_post, now) + spacing;
    }
    if (m.unposted_wrs == 0) ++c.posting;
  }
}

void VerbsDataPlane::on_event(uint64_t tag, clock::Nanos) {
  Connection& c = *connections_.at(tag);
  c.post_scheduled = false;
  post_work(c);
}

void VerbsDataPlane::poll() {
  events_ += clock_->poll();
  // Until every queue is empty: handling completions posts more work, and on the software RNIC
  // a post into a QP in error completes at once.
  bool any = true;
  while (any) {
    any = false;
    for (auto& device : devices_) any = poll_device(*device) > 0 || any;
  }
}

size_t VerbsDataPlane::poll_device(Device& device) {
  size_t total = 0;
  if (device.lost) return total;
  for (;;) {
    const int n = device.cq->poll(kBurst, completions_.data());
    if (n < 0) {
      on_cq_overrun(device);
      return total;
    }
    for (int i = 0; i < n; ++i) {
      const ibv_wc& wc = completions_[static_cast<size_t>(i)];
      --device.cq_load;
      auto it = device.qps.find(wc.qp_num);
      if (it == device.qps.end()) continue;
      Connection& c = *connections_[it->second / 2];
      if (it->second % 2 == 0) {
        on_send_completion(c, wc);
      } else {
        on_receive_completion(c, wc);
      }
    }
    total += static_cast<size_t>(n);
    if (n < kBurst) return total;
  }
}

void VerbsDataPlane::on_cq_overrun(Device& device) {
  device.lost = true;
  notes_.push_back(fmt::format(
      "{}: ibv_poll_cq failed: its completion queue ({} entries) overran; as on "
      "IBV_EVENT_CQ_ERR its queue pairs are in error: on each of their connections the first "
      "flow whose completion it would have carried fails (device-error), those behind are "
      "flushed",
      device.device->name(), device.cq->capacity()));
  for (size_t i = 0; i < connections_.size(); ++i) {
    Connection& c = *connections_[i];
    const bool requester_here = device_of(c.src_port) == &device;
    const bool responder_here = device_of(c.dst_port) == &device;
    if (responder_here) {
      // No delivery is seen again: every message not yet released waits for one.
      fail_connection(c, 0,
                      requester_here ? QpAfterFailure::kWriteOff : QpAfterFailure::kMoveToError);
    } else if (requester_here) {
      // Messages sent in full before the overrun are done; their receiver sees them delivered.
      size_t first = 0;
      while (first < c.messages.size() && c.messages[first].sent_at != clock::kNever) ++first;
      fail_connection(c, first, QpAfterFailure::kWriteOff);
    }
  }
}

bool VerbsDataPlane::quote_failure() {
  return quoted_failures_++ < kQuotedFailures;
}

void VerbsDataPlane::fail_connection(Connection& c, size_t first_failed, QpAfterFailure qp) {
  c.failed = true;
  for (size_t i = first_failed; i < c.messages.size(); ++i) {
    Message& m = c.messages[i];
    if (m.status == transport::FlowStatus::kCompleted) {
      m.status =
          i == first_failed ? transport::FlowStatus::kDeviceError : transport::FlowStatus::kFlushed;
    }
  }
  if (qp == QpAfterFailure::kWriteOff) {
    // Nothing the requester had out will complete where this data plane can see it.
    for (size_t i = 0; i < c.messages.size(); ++i) c.messages[i].outstanding_wrs = 0;
    c.outstanding = 0;
  } else if (qp == QpAfterFailure::kMoveToError && c.requester) {
    // As the device does after an error: what the requester has out comes back flushed.
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    c.requester->modify(attr, IBV_QP_STATE);
  }
  settle(c);
}

void VerbsDataPlane::on_send_completion(Connection& c, const ibv_wc& wc) {
  if (c.outstanding == 0) return;  // its work was written off when its queue was lost
  --c.outstanding;
  // Completions come in posting order: the oldest message with work out is this one's.
  size_t i = 0;
  while (i < c.messages.size() && c.messages[i].outstanding_wrs == 0) ++i;
  if (i == c.messages.size()) return;
  Message& m = c.messages[i];
  --m.outstanding_wrs;
  if (m.outstanding_wrs == 0 && m.unposted_wrs == 0) m.sent_at = clock_->now();
  if (wc.status != IBV_WC_SUCCESS) {
    if (m.status == transport::FlowStatus::kCompleted) m.status = flow_status(wc.status);
    // The first error of a connection is quoted; a flush first means something else (the
    // device, on a fatal or CQ error) moved the QP to ERR.
    if (!c.failed && quote_failure()) {
      notes_.push_back(fmt::format(
          "{}, {} QP 0x{:x}: work completion {} (vendor error 0x{:x}); {}",
          ports_between(c.src_port, c.dst_port), device_of(c.src_port)->device->name(), wc.qp_num,
          nic::verbs::work_completion_status_name(wc.status), wc.vendor_err,
          wc.status == IBV_WC_WR_FLUSH_ERR
              ? "the QP was put in error with no failed work request before it, and everything "
                "on it is flushed"
              : "the QP is in error and what was queued behind is flushed"));
    }
    c.failed = true;
  }
  settle(c);
  post_work(c);
}

void VerbsDataPlane::on_receive_completion(Connection& c, const ibv_wc& wc) {
  --c.receives_posted;
  // Flushed receives are those of a QP in error; a failed receive fails the sender's message too.
  if (wc.status != IBV_WC_SUCCESS) return;
  const clock::Nanos now = clock_->now();
  bool delivered = true;
  if (config_.transport.op == config::RdmaOp::kSend) {
    delivered = !c.awaited_wrs.empty() && ++c.received_wrs == c.awaited_wrs.front();
    if (delivered) {
      c.awaited_wrs.pop_front();
      c.received_wrs = 0;
    }
  }
  // Receives go back in at once, so the queue stays full ahead of the sender.
  Device& device = *devices_[ports_[c.dst_port]->device];
  ibv_sge sge{device.region.address, static_cast<uint32_t>(device.region.length),
              device.region.lkey};
  ibv_recv_wr wr{};
  wr.wr_id = c.index;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (c.responder->post_recv(&wr, &bad) == 0) {
    ++device.cq_load;
    ++c.receives_posted;
  }
  if (delivered) {
    join_.delivered(c.plan_requester, now, 0, wc.imm_data);
    ++c.deliveries;
    settle(c);
  }
}

void VerbsDataPlane::settle(Connection& c) {
  const clock::Nanos now = clock_->now();
  const bool receives = needs_receives(config_.transport.op);
  while (!c.messages.empty()) {
    const Message& front = c.messages.front();
    const bool posted = front.unposted_wrs == 0;
    if (front.outstanding_wrs != 0 || (!posted && !c.failed)) return;
    // Sent in full, not yet seen delivered: it waits for its receive completion (which another
    // process sees, when the responder is there).
    if (receives && c.responder && !c.failed && front.status == transport::FlowStatus::kCompleted &&
        c.deliveries <= c.settled) {
      return;
    }
    const Message m = c.messages.pop_front();
    ++c.settled;
    if (c.posting > 0) --c.posting;
    transport::FlowRecord record;
    record.tags = m.tags;
    record.src_port = c.src_port;
    record.dst_port = c.dst_port;
    record.qpn = c.plan_requester;
    record.dest_qpn = c.plan_responder;
    record.bytes = m.bytes;
    record.first_byte_out = m.first_out;
    record.finished_at = m.sent_at != clock::kNever ? m.sent_at : now;
    record.packets = static_cast<uint32_t>(
        std::max<uint64_t>(1, (m.bytes + config_.transport.pmtu - 1) / config_.transport.pmtu));
    // Work never posted because the QP went into error is flushed, as the device would.
    record.status = m.status != transport::FlowStatus::kCompleted || posted
                        ? m.status
                        : transport::FlowStatus::kFlushed;
    // A WRITE tells the receiver nothing: its acknowledgement is the delivery.
    if (record.status == transport::FlowStatus::kCompleted && !receives && c.responder) {
      join_.delivered(c.plan_requester, record.finished_at, 0);
      ++c.deliveries;
    }
    join_.finished(record);
  }
}

PortRecord VerbsDataPlane::port_record(size_t p) const {
  const Port& port = *ports_[p];
  if (port.device == kElsewhere) {
    // Another emulator process drives it and reports its counters.
    PortRecord elsewhere;
    elsewhere.name = config_.ports[p].name;
    elsewhere.speed_bps = config_.ports[p].speed_bps;
    elsewhere.absent = ~uint32_t{0};
    return elsewhere;
  }
  const auto now = devices_[port.device]->device->read_counters(port.number);
  PortRecord record;
  record.name = config_.ports[p].name;
  record.speed_bps = config_.ports[p].speed_bps;
  record.rate_limit_bps = port.rate_limit_bps;
  record.rate_limited_by = port.rate_limited_by;
  for (size_t f = 0; f < kPortCounterFields.size(); ++f) {
    const PortCounterField& field = kPortCounterFields[f];
    auto current = std::find_if(now.begin(), now.end(),
                                [&](const auto& item) { return item.first == field.name; });
    if (current == now.end()) {
      record.absent |= port_counter_bit(f);
      continue;
    }
    auto base = std::find_if(port.baseline.begin(), port.baseline.end(),
                             [&](const auto& item) { return item.first == field.name; });
    const uint64_t start = base == port.baseline.end() ? 0 : base->second;
    // A counter reset under the run (driver reload) counts from zero again.
    record.*field.member = current->second >= start ? current->second - start : current->second;
  }
  return record;
}

void VerbsDataPlane::paced_rates_bps(std::vector<double>& per_port) {
  per_port.assign(ports_.size(), 0.0);
  for (const auto& c : connections_) {
    const uint64_t limit = ports_[c->src_port]->rate_limit_bps;
    if (limit != 0 && c->outstanding > 0) per_port[c->src_port] += static_cast<double>(limit);
  }
  for (size_t p = 0; p < per_port.size(); ++p) {
    per_port[p] = std::min(per_port[p], static_cast<double>(config_.ports[p].speed_bps));
  }
}

}  // namespace etwire::dataplane
