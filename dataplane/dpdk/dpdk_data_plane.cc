#include "dataplane/dpdk/dpdk_data_plane.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>

#include "nic/dpdk/cpus_beside_lcores.h"
#include "nic/dpdk/eal.h"
#include "nic/dpdk/runtime_dir.h"

namespace etwire::dataplane {

namespace {

// Names of rings, devices and mempools are process-wide in DPDK: each data plane gets its own.
std::atomic<uint32_t> instances{0};

// The --file-prefix etwire gives an emulator process's EAL: a new one per process.
std::string own_file_prefix_name() {
  return fmt::format("etwire-{}", getpid());
}

// That prefix when `args` (eal_arguments) carry it, else empty.
std::string own_file_prefix(const std::vector<std::string>& args) {
  const std::string own = own_file_prefix_name();
  const bool given = std::find(args.begin(), args.end(), "--file-prefix=" + own) != args.end();
  return given ? own : std::string();
}

}  // namespace

std::vector<std::string> eal_arguments(const config::RunConfig& config, uint32_t emulator) {
  std::vector<std::string> args = {"--no-telemetry", "--log-level=warning"};
  args.insert(args.end(), config.dpdk.eal_args.begin(), config.dpdk.eal_args.end());
  const bool own_files = std::any_of(
      config.dpdk.eal_args.begin(), config.dpdk.eal_args.end(), [](const std::string& arg) {
        return arg.starts_with("--file-prefix") || arg == "--in-memory";
      });
  if (config.emulators.size() > 1 && !own_files) {
    args.push_back(fmt::format("--file-prefix={}", own_file_prefix_name()));
  }
  for (const config::PortConfig& port : config.ports) {
    if (port.backend != config::Backend::kDpdk || !config::drives_port(config, port, emulator)) {
      continue;
    }
    if (!port.dpdk.vdev.empty() && !config::is_ring_device(port.dpdk)) {
      args.push_back("--vdev=" + port.dpdk.vdev);
    } else if (!port.dpdk.pci.empty()) {
      args.push_back("-a");
      args.push_back(port.dpdk.pci);
    }
  }
  return args;
}

DpdkDataPlane::DpdkDataPlane(const config::RunConfig& config, transport::FlowObserver& observer,
                             uint32_t emulator)
    : config_(config),
      join_(observer),
      payload_(config.transport.pmtu, config.transport.pmtu),
      queue_workers_(config.ports.size()),
      next_queue_(config.ports.size(), 0),
      next_responder_queue_(config.ports.size(), 0) {
  for (const config::PortConfig& port : config.ports) {
    if (port.backend != config::Backend::kDpdk) {
      throw std::invalid_argument(fmt::format(
          "{}: port \"{}\" ({}) uses the {} backend; a DPDK run drives dpdk ports only",
          config.source_file, port.name, port.key_path, config::backend_name(port.backend)));
    }
  }
  for (const config::PortConfig& port : config.ports) {
    here_.push_back(config::drives_port(config, port, emulator));
  }
  // A wall-clock port cannot wait for the writer: its ring holds as many frames as fit in the
  // budget, so that a writer stall is absorbed longer the fewer bytes a frame keeps.
  if (config.telemetry.record.pcap) {
    capture_ =
        std::make_unique<FrameCapture>(config, nic::capture::FrameCaptureRing::kWallClockBytes);
  }
  const std::vector<std::string> eal_args = eal_arguments(config, emulator);
  nic::dpdk::start_eal(eal_args);
  if (const std::string own = own_file_prefix(eal_args); !own.empty()) {
    nic::dpdk::remove_runtime_dir_at_exit(own);
  }
  if (capture_) place_capture_writer();
  const uint32_t instance = instances.fetch_add(1);
  devices_ = std::make_unique<nic::dpdk::RunDevices>(config, instance, emulator);
  try {
    // Group the queues by lcore: the main lcore's group first, then by lcore number.
    std::map<std::optional<unsigned>, std::vector<nic::dpdk::DpdkPortSetup>> groups;
    for (size_t p = 0; p < config.ports.size(); ++p) {
      const config::PortConfig& port = config.ports[p];
      if (!here_[p]) continue;  // another emulator process drives it
      for (uint16_t queue = 0; queue < port.dpdk.queues; ++queue) {
        std::optional<unsigned> lcore;
        if (port.dpdk.queues > 1) {
          lcore = port.dpdk.lcores.at(queue);
        } else if (port.dpdk.lcore) {
          lcore = *port.dpdk.lcore;
        }
        if (lcore && (*lcore >= RTE_MAX_LCORE || !rte_lcore_is_enabled(*lcore) ||
                      *lcore == rte_get_main_lcore())) {
          throw std::runtime_error(fmt::format(
              "port \"{}\" ({}.dpdk.{}): lcore {} is not a worker lcore of the EAL (main "
              "lcore {}, {} lcores enabled); give the EAL more with dpdk.eal_args (-l 0-2){}",
              port.name, port.key_path, port.dpdk.queues > 1 ? "lcores" : "lcore", *lcore,
              rte_get_main_lcore(), rte_lcore_count(),
              port.dpdk.queues > 1
                  ? ""
                  : ", or leave dpdk.lcore out to run the port on the main lcore"));
        }
        nic::dpdk::DpdkPortSetup setup =
            port_setup(p, queue, devices_->device(p), instance, devices_->rx_ring(p, queue));
        if (capture_) {
          setup.capture_ring = &capture_->add_ring(p);
          setup.capture_writer = &capture_->writer();
        }
        groups[lcore].push_back(std::move(setup));
      }
    }
    for (const auto& [lcore, setups] : groups) {
      for (const nic::dpdk::DpdkPortSetup& setup : setups) {
        std::vector<uint32_t>& workers = queue_workers_[setup.index];
        workers.resize(setup.queues);
        workers[setup.queue] = static_cast<uint32_t>(workers_.size());
      }
      workers_.push_back(std::make_unique<PortWorker>(config, payload_, setups, lcore));
      if (!lcore) main_worker_ = workers_.back().get();
    }
    unsent_.resize(workers_.size());
    if (std::any_of(config.ports.begin(), config.ports.end(),
                    [](const config::PortConfig& port) { return port.dpdk.queues > 1; })) {
      connect_handover();
    }
    devices_->start();
  } catch (...) {
    // The ports go before the devices they were set up on.
    workers_.clear();
    throw;
  }
}

nic::dpdk::DpdkPortSetup DpdkDataPlane::port_setup(size_t p, uint16_t queue, uint16_t device,
                                                   uint32_t instance, rte_ring* rx_ring) const {
  const config::PortConfig& port = config_.ports[p];
  nic::dpdk::DpdkPortSetup setup;
  setup.name = port.name;
  setup.device = device;
  setup.index = static_cast<uint32_t>(p);
  setup.queue = queue;
  setup.queues = port.dpdk.queues;
  // Each queue paces its share of the port's line rate.
  setup.speed_bps = port.speed_bps / port.dpdk.queues;
  setup.mtu = port.mtu;
  setup.pmtu = config_.transport.pmtu;
  setup.ip_version = config_.transport.ip_version;
  setup.vlan = port.vlan;
  setup.mac = port.mac.bytes;
  setup.rx_descriptors = port.dpdk.rx_descriptors;
  setup.tx_descriptors = port.dpdk.tx_descriptors;
  setup.mbufs = config_.dpdk.mbufs;
  setup.mbuf_cache = config_.dpdk.mbuf_cache;
  setup.burst = config_.dpdk.burst;
  setup.pool_prefix = fmt::format("etw{}p{}q{}", instance, p, queue);
  setup.pfc.enabled = port.dpdk.pfc.enabled;
  setup.pfc.priority = port.qos.data.priority;
  setup.pfc.xoff = port.dpdk.pfc.xoff;
  setup.pfc.xon = port.dpdk.pfc.xon;
  setup.pfc.quanta = port.dpdk.pfc.quanta;
  // The ring PMD cannot count its receive queue; the ring it receives from can.
  setup.rx_ring = rx_ring;
  return setup;
}

void DpdkDataPlane::connect_handover() {
  const size_t n = workers_.size();
  handover_rings_.resize(n * n);
  for (size_t from = 0; from < n; ++from) {
    for (size_t to = 0; to < n; ++to) {
      if (from != to) handover_rings_[from * n + to] = std::make_unique<HandoverRing>(4096);
    }
  }
  for (size_t w = 0; w < n; ++w) {
    std::vector<HandoverRing*> to(n, nullptr);
    std::vector<HandoverRing*> from(n, nullptr);
    for (size_t other = 0; other < n; ++other) {
      to[other] = handover_rings_[w * n + other].get();
      from[other] = handover_rings_[other * n + w].get();
    }
    workers_[w]->set_handover(&queue_workers_, std::move(to), std::move(from));
  }
}

DpdkDataPlane::~DpdkDataPlane() {
  finish();
  // Before the workers (and the pools their receive queues hold mbufs of) go.
  devices_->stop();
  workers_.clear();
}

void DpdkDataPlane::start() {
  // A device whose link is not up yet would drop the run's first frames.
  const std::vector<std::string> down = devices_->wait_for_links(std::chrono::seconds(5));
  if (!down.empty()) {
    notes_.push_back(
        fmt::format("the link of port{} {} was still down 5 s after setup; the run "
                    "started anyway",
                    down.size() == 1 ? "" : "s", fmt::join(down, ", ")));
  }
  clock_.restart();
  if (capture_) {
    capture_->begin(clock_.now(), writer_cpus_);
  }
  for (auto& worker : workers_) worker->share_time_with(clock_);
  for (auto& worker : workers_) worker->launch();
}

void DpdkDataPlane::settle_wire() {
  // Frames on the wire when the workers stopped (a resend a timer sent just before the ACK that
  // ended the run, on a machine that held the receiver's lcore off its CPU) would be sent by one
  // port and never received by the other. Passes over every port take them in and send what
  // they answer until one moves nothing: on devices that hand a frame straight to the peer
  // (ring, memif) the ports' counts then agree across every cable. A device under test that
  // keeps sending ends it at the cap.
  constexpr int kMaxSettlePasses = 256;
  for (int pass = 0; pass < kMaxSettlePasses; ++pass) {
    bool moved = false;
    for (auto& worker : workers_) moved |= worker->settle_pass();
    if (!moved) return;
  }
}

void DpdkDataPlane::finish() {
  if (finished_) return;
  finished_ = true;
  for (auto& worker : workers_) worker->halt();
  settle_wire();
  for (auto& worker : workers_) worker->stop();
  if (capture_) capture_->stop();
}

void DpdkDataPlane::place_capture_writer() {
  const nic::dpdk::CpusBesideLcores where = nic::dpdk::cpus_beside_lcores();
  writer_cpus_ = where.cpus;
  if (where.shared) {
    notes_.push_back(fmt::format(
        "capture: every CPU this process may use ({}) runs an EAL lcore; the capture writer "
        "shares them and may fall behind busy-polling ports (leave a CPU out of the EAL's -l or "
        "--lcores)",
        nic::dpdk::cpu_list(where.cpus)));
  }
}

void DpdkDataPlane::capture_frames(const std::string& dir) {
  if (capture_) capture_->open(dir);
}

std::vector<std::string> DpdkDataPlane::notes() const {
  std::vector<std::string> notes = notes_;
  if (capture_) {
    for (std::string& note : capture_->notes()) notes.push_back(std::move(note));
  }
  return notes;
}

void DpdkDataPlane::poll() {
  events_ += clock_.poll();
  for (size_t w = 0; w < workers_.size(); ++w) send_waiting(w);
  if (main_worker_ != nullptr) main_worker_->run_once();
  for (auto& worker : workers_) {
    worker->check();
    worker->drain_reports([this](const WorkerReport& report) { handle(report); });
  }
}

bool DpdkDataPlane::append_qp_stats(std::vector<transport::QpStats>& out) {
  if (!finished_) return false;
  for (auto& worker : workers_) worker->append_qp_stats(out, clock_.now());
  return true;
}

uint64_t DpdkDataPlane::events_run() const {
  uint64_t events = events_;
  for (const auto& worker : workers_) events += worker->events_run();
  return events;
}

void DpdkDataPlane::send(size_t worker, const WorkerCommand& command) {
  // Behind a command that is already waiting, or when the ring is full: keep the order.
  if (!unsent_[worker].empty() || !workers_[worker]->send(command)) {
    unsent_[worker].push_back(command);
  }
}

void DpdkDataPlane::send_waiting(size_t worker) {
  RingQueue<WorkerCommand>& waiting = unsent_[worker];
  while (!waiting.empty() && workers_[worker]->send(waiting.front())) waiting.pop_front();
}

transport::ConnectionId DpdkDataPlane::connect(const WireConnection& connection) {
  const WireEndpoint& from = connection.requester;
  const WireEndpoint& to = connection.responder;
  const config::PortConfig& src = config_.ports[from.port];
  const config::PortConfig& dst = config_.ports[to.port];
  if (!src.dpdk.peer.empty() && src.dpdk.peer != dst.name) {
    throw std::invalid_argument(fmt::format(
        "{}: ranks on port \"{}\" send to ranks on port \"{}\", but \"{}\" is cabled back to "
        "back to \"{}\" (dpdk.peer) and reaches nothing else; map the job so that traffic "
        "crosses that cable only (hosts.ranks_per_host keeps traffic within a host off the ports)",
        config_.source_file, src.name, dst.name, src.name, src.dpdk.peer));
  }
  if (src.dpdk.peer.empty() && config::is_ring_device(src.dpdk) && from.port != to.port) {
    throw std::invalid_argument(fmt::format(
        "{}: ranks on port \"{}\" send to ranks on port \"{}\", but \"{}\" is a ring device "
        "looped to itself (no dpdk.peer)",
        config_.source_file, src.name, dst.name, src.name));
  }
  const uint32_t id = connections_;
  WorkerCommand command;
  command.kind = WorkerCommand::Kind::kConnect;
  command.connection = id;
  command.udp_source_port = connection.udp_source_port;
  // A port's connections take its queues in turn, and so do the responder ends on a port. Between
  // ports of as many queues, both ends take the same queue number: a ring cable (one ring per
  // queue) delivers a queue's frames to the same queue at the other end. A port of another
  // process counts as its configured queues.
  const auto queues_of = [&](uint32_t port) {
    return here_[port] ? static_cast<uint32_t>(queue_workers_[port].size())
                       : uint32_t{config_.ports[port].dpdk.queues};
  };
  const uint32_t src_queues = queues_of(from.port);
  const uint32_t dst_queues = queues_of(to.port);
  const auto src_queue = static_cast<uint16_t>(next_queue_[from.port]++ % src_queues);
  const auto dst_queue = src_queues == dst_queues
                             ? src_queue
                             : static_cast<uint16_t>(next_responder_queue_[to.port]++ % dst_queues);
  command.route.requester = {from.port, from.qpn, src_queue, from.wire_qpn};
  command.route.responder = {to.port, to.qpn, dst_queue, to.wire_qpn};
  command.route.forward = wire_addresses(from, to, config_);
  command.route.backward = wire_addresses(to, from, config_);
  // Refused here (a QP number twice, or a wire number beyond 24 bits) before any worker sees it.
  directory_.add(id, command.route);
  join_.add_connection(from.port, from.qpn, to.port, to.qpn,
                       here_[from.port] && here_[to.port] ? HalvesHere::kBoth
                       : here_[from.port]                 ? HalvesHere::kRequester
                                                          : HalvesHere::kResponder);
  ++connections_;
  if (here_[from.port]) {
    if (from.qpn >= worker_of_requester_.size())
      worker_of_requester_.resize(from.qpn + 1, kNoWorker);
    worker_of_requester_[from.qpn] = queue_workers_[from.port][src_queue];
  }
  // Every worker learns every route; each opens the halves it drives.
  for (size_t w = 0; w < workers_.size(); ++w) send(w, command);
  wait_until_open(id);
  return {from.qpn, to.qpn};
}

void DpdkDataPlane::wait_until_open(uint32_t id) {
  // Before a message goes out, the receiving port's worker must know the connection, or its
  // first frames would arrive for an unknown QP and be dropped. Opening is quick (the workers
  // poll their rings all the time), and it happens once per connection, as QP setup does.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (size_t w = 0; w < workers_.size(); ++w) {
    PortWorker& worker = *workers_[w];
    while (worker.connections_open() <= id) {
      send_waiting(w);
      if (&worker == main_worker_) {
        worker.run_once();
        continue;
      }
      worker.check();
      if (std::chrono::steady_clock::now() > give_up) {
        throw std::runtime_error(
            fmt::format("the port worker on lcore {} did not open connection {} within 10 s",
                        *worker.lcore(), id));
      }
      rte_pause();
    }
  }
}

void DpdkDataPlane::post(transport::ConnectionId connection, uint64_t bytes,
                         const transport::FlowTags& tags) {
  if (connection.requester >= worker_of_requester_.size() ||
      worker_of_requester_[connection.requester] == kNoWorker) {
    throw std::logic_error(
        fmt::format("post on requester QP {}, whose port another emulator process drives",
                    connection.requester));
  }
  join_.posted(connection.requester, bytes, tags, clock_.now());
  WorkerCommand command;
  command.kind = WorkerCommand::Kind::kPost;
  command.requester_qpn = connection.requester;
  command.bytes = bytes;
  command.tags = tags;
  send(worker_of_requester_[connection.requester], command);
}

void DpdkDataPlane::handle(const WorkerReport& report) {
  switch (report.kind) {
    case WorkerReport::Kind::kRemoteDelivery:
      join_.delivered(report.requester_qpn, report.at, report.ecn_marks, report.immediate);
      break;
    case WorkerReport::Kind::kDelivered:
      join_.on_flow_delivered(report.record);
      break;
    case WorkerReport::Kind::kFinished:
      join_.finished(report.record);
      break;
  }
}

void DpdkDataPlane::paced_rates_bps(std::vector<double>& per_port) {
  per_port.assign(config_.ports.size(), 0.0);
  for (size_t p = 0; p < per_port.size(); ++p) {
    for (uint32_t worker : queue_workers_[p]) {
      per_port[p] +=
          static_cast<double>(workers_[worker]->sample(static_cast<uint32_t>(p)).paced_rate_bps);
    }
  }
}

PortCounters DpdkDataPlane::port_counters(size_t index) const {
  PortCounters counters;
  if (!here_[index]) return counters;
  for (uint32_t worker : queue_workers_[index]) {
    counters += workers_[worker]->sample(static_cast<uint32_t>(index)).counters;
  }
  return counters;
}

PortRecord DpdkDataPlane::port_record(size_t index) const {
  if (!here_[index]) {
    // Another emulator process drives it and counts for it.
    PortRecord elsewhere;
    elsewhere.name = config_.ports[index].name;
    elsewhere.speed_bps = config_.ports[index].speed_bps;
    elsewhere.absent = dataplane::PortRecord::kDrivenElsewhere;
    return elsewhere;
  }
  // Each queue's counters are read once: the port's figures are their sum, so the two agree
  // even while the workers run.
  const std::vector<uint32_t>& workers = queue_workers_[index];
  std::vector<PortSample> shares;
  shares.reserve(workers.size());
  PortSample sample;
  for (uint32_t worker : workers) {
    shares.push_back(workers_[worker]->sample(static_cast<uint32_t>(index)));
    sample += shares.back();
  }
  PortRecord record;
  record.name = config_.ports[index].name;
  record.speed_bps = config_.ports[index].speed_bps;
  static_cast<PortCounters&>(record) = sample.counters;
  if (workers.size() > 1) {
    for (uint32_t q = 0; q < workers.size(); ++q) {
      const PortSample& share = shares[q];
      PortQueueRecord queue;
      queue.queue = q;
      queue.lcore = workers_[workers[q]]->lcore().value_or(rte_get_main_lcore());
      queue.tx_bytes = share.counters.tx_bytes;
      queue.rx_bytes = share.counters.rx_bytes;
      queue.tx_packets = share.counters.tx_packets;
      queue.rx_packets = share.counters.rx_packets;
      queue.handed_over = share.rx_handed_over;
      record.queues.push_back(queue);
    }
  }
  return record;
}

}  // namespace etwire::dataplane
