// The verbs data plane's devices and ports: opening the devices, checking each port, the DCQCN
// settings of a real RNIC, the clock, and the devices' counters as port records. Connections are
// in verbs_connections.cc (and, across processes, verbs_qp_exchange.cc); work requests and their
// completions in verbs_posting.cc.
#include "dataplane/verbs/verbs_data_plane.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/rate.h"
#include "dataplane/verbs/verbs_data_plane_internal.h"
#include "nic/verbs/dcqcn_sysfs.h"
#include "nic/verbs/port_selection.h"
#include "nic/verbs/rdma_devices.h"

namespace etwire::dataplane {

using verbs_data_plane_internal::kBurst;
using verbs_data_plane_internal::kElsewhere;
using verbs_data_plane_internal::timeout_exponent;

namespace {

// Entries of each device's completion queue: every send outstanding and every receive posted
// ahead must fit (64 B a entry on mlx5: 16 MiB a device).
constexpr int kCqEntries = 1 << 18;

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

// One protection domain, completion queue and registered buffer: every work request on the device
// reads from and writes into the buffer.
std::unique_ptr<VerbsDataPlane::Device> open_device(nic::verbs::VerbsProvider& provider,
                                                    const std::string& name,
                                                    uint64_t buffer_bytes) {
  auto device = std::make_unique<VerbsDataPlane::Device>();
  device->device = provider.open(name);
  device->cq = device->device->create_cq(kCqEntries);
  // One buffer per device, page-aligned as registration prefers; its contents do not matter.
  device->buffer.reset(
      static_cast<uint8_t*>(std::aligned_alloc(4096, (buffer_bytes + 4095) & ~uint64_t{4095})));
  if (!device->buffer) throw std::bad_alloc();
  std::memset(device->buffer.get(), 0x5a, buffer_bytes);
  device->region = device->device->register_memory(
      device->buffer.get(), buffer_bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  return device;
}

// Checks run port `port` on its device (up, Ethernet, active MTU, the GID of its address) and
// notes the GID it uses, and a speed the device reports other than the configuration's. Throws
// std::runtime_error naming the port when the device refuses it.
void check_port(const config::RunConfig& config, const config::PortConfig& port,
                nic::verbs::VerbsDevice& device, VerbsDataPlane::Port& p,
                std::vector<std::string>& notes) {
  try {
    const nic::verbs::SelectedPort selected = nic::verbs::select_port(
        device, p.number, port.verbs.gid_index, address_gid(port, config.transport.ip_version),
        address_text(port, config.transport.ip_version), config.transport.pmtu);
    p.gid = selected.gid;
    const uint64_t reported =
        nic::verbs::port_speed_bps(selected.attr.active_speed, selected.attr.active_width);
    if (reported != 0 && reported != port.speed_bps) {
      notes.push_back(fmt::format(
          "{}: {} port {} runs at {} but the configuration says {}: ideal % and line-rate "
          "times use the configuration's speed",
          port.name, port.verbs.device, p.number, format_rate(reported),
          format_rate(port.speed_bps)));
    }
  } catch (const nic::verbs::PortRefused& e) {
    throw std::runtime_error(
        fmt::format("port \"{}\" ({}): {}", port.name, port.key_path, e.what()));
  }
  notes.push_back(fmt::format("{}: {} port {}, GID {}: {}", port.name, port.verbs.device, p.number,
                              p.gid.gid_index, address_text(port, config.transport.ip_version)));
}

// The port counter fields missing from what a device reads out.
uint32_t absent_fields(const std::vector<std::pair<std::string, uint64_t>>& counters) {
  uint32_t absent = 0;
  for (size_t f = 0; f < kPortCounterFields.size(); ++f) {
    const bool exposed = std::any_of(counters.begin(), counters.end(), [&](const auto& item) {
      return item.first == kPortCounterFields[f].name;
    });
    if (!exposed) absent |= port_counter_bit(f);
  }
  return absent;
}

}  // namespace

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
      devices_.push_back(open_device(*provider_, port.verbs.device, buffer_bytes));
      device_names.push_back(port.verbs.device);
    }
    check_port(config, port, *devices_[p->device]->device, *p, notes_);
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
    port.absent |= absent_fields(port.baseline);
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

std::string VerbsDataPlane::ports_between(uint32_t from, uint32_t to) const {
  return fmt::format("ports \"{}\" -> \"{}\"", config_.ports[from].name, config_.ports[to].name);
}

VerbsDataPlane::Device* VerbsDataPlane::device_of(size_t port) const {
  const size_t device = ports_.at(port)->device;
  return device == kElsewhere ? nullptr : devices_[device].get();
}

PortRecord VerbsDataPlane::port_record(size_t p) const {
  const Port& port = *ports_[p];
  if (port.device == kElsewhere) {
    // Another emulator process drives it and reports its counters.
    PortRecord elsewhere;
    elsewhere.name = config_.ports[p].name;
    elsewhere.speed_bps = config_.ports[p].speed_bps;
    elsewhere.absent = dataplane::PortRecord::kDrivenElsewhere;
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

}  // namespace etwire::dataplane
