// The DPDK port's transmit path, on one core, against DPDK's own generator, and the accuracy of
// the transport's pacing on the wall clock. Both on net_null, so nothing but etwire and DPDK is
// measured.
//
//   bench_dpdk [--seconds S] [--skip-testpmd] [--skip-capture] [--skip-spray] [--skip-pacing]
//              [--rates G,G,...] [--tx-descriptors N]
//
// Frames: WRITE MIDDLE packets of a full PMTU (1024 and 4096 bytes), IPv4, with the ICRC, built
// by DpdkPort::transmit from the transport's packet struct, exactly as in a run, and handed to
// the device in bursts. testpmd (--forward-mode=txonly, same frame size, run for the same time
// right after, its forwarding core on lcore 0 as etwire's loop is: the two vCPUs of a shared
// machine are not always equally fast) writes a fixed 42-byte header into each mbuf and no ICRC:
// the reference. etwire's rate should be at least 0.9 of it (the table's `target` column);
// bench/build-testpmd.sh builds testpmd, which Debian does not ship.
//
// Pacing: one connection sends messages back to back through the transport on the wall clock,
// at a port speed from 1 Gb/s up; achieved = wire bytes handed to the device in the first second
// of the clock, divided by the time elapsed when they were counted. Gaps between the frames'
// transmit times are collected for the jitter figures. The port's TX ring is what a run gives a
// port of that speed (config::default_tx_descriptors) unless --tx-descriptors says otherwise;
// half of it is the catch-up. Rounds of the loop longer than the catch-up are counted: on a
// shared machine they are where rate is lost.
#include <rte_eal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "clock/wall_clock.h"
#include "config/port_config.h"
#include "nic/capture/capture_writer.h"
#include "nic/capture/frame_capture_ring.h"
#include "nic/dpdk/dpdk_port.h"
#include "nic/dpdk/eal.h"
#include "nic/frame/payload_pattern.h"
#include "nic/frame/wire_directory.h"
#include "nic/frame_size.h"
#include "transport/transport.h"

namespace {

using namespace etwire;

struct Options {
  double seconds = 3;
  bool testpmd = true;
  bool capture = true;
  bool spray = true;
  bool pacing = true;
  std::vector<double> rates_gbps = {1, 10, 25, 100, 200, 400};
  uint16_t tx_descriptors = 0;  // 0: what a run gives a port of that speed
};

nic::WireRoute one_route() {
  nic::WireRoute route;
  route.requester = {0, 256};
  route.responder = {0, 257};
  route.forward.src_mac = {0x02, 0, 0, 0, 0, 1};
  route.forward.dst_mac = {0x02, 0, 0, 0, 0, 2};
  route.forward.src_ip = {10, 0, 0, 1};
  route.forward.dst_ip = {10, 0, 0, 2};
  route.backward = route.forward;
  std::swap(route.backward.src_mac, route.backward.dst_mac);
  std::swap(route.backward.src_ip, route.backward.dst_ip);
  return route;
}

// Device 0 is net_null with copy=1, for the transmit rate; device 1 net_null with no-rx=1 (DPDK
// allows not both), for pacing, where a receive side would hand the loop dummy frames to parse.
nic::dpdk::DpdkPortSetup null_port(uint16_t device, uint32_t pmtu, uint64_t speed_bps,
                                   const std::string& prefix) {
  nic::dpdk::DpdkPortSetup setup;
  setup.name = "null";
  setup.device = device;
  setup.speed_bps = speed_bps;
  setup.mtu = pmtu + 200;
  setup.pmtu = pmtu;
  setup.mbufs = 8191;
  setup.pool_prefix = prefix;
  return setup;
}

// Frames per second of DpdkPort::transmit on one core. With `capture_snap` above 0, the port also
// captures (telemetry.record.pcap) into a ring of frames of that many bytes, sized as a DPDK run's
// (FrameCaptureRing::kWallClockBytes), which a writer thread writes to a file under /tmp; `lost` is
// then the share of frames the ring had no room for. With `spray_values` above 0, each frame's UDP
// source port is the next of that many (transport.entropy spray, every 1).
double etwire_mpps(uint32_t pmtu, double seconds, uint32_t& frame_bytes, uint32_t capture_snap = 0,
                   double* lost = nullptr, uint32_t spray_values = 0) {
  frame::PayloadPattern payload(pmtu, pmtu);
  nic::WireDirectory directory;
  directory.add(0, one_route());
  static int round = 0;
  nic::dpdk::DpdkPortSetup setup =
      null_port(0, pmtu, 400'000'000'000, "tx" + std::to_string(round++));
  std::optional<nic::capture::FrameCaptureRing> ring;
  nic::capture::CaptureWriter writer({});
  const std::string capture_file =
      "/tmp/bench_dpdk_capture_" + std::to_string(getpid()) + ".pcapng";
  if (capture_snap > 0) {
    ring.emplace(nic::capture::FrameCaptureRing::slots_within(
                     nic::capture::FrameCaptureRing::kWallClockBytes, capture_snap),
                 capture_snap);
    writer.add_file(capture_file, "null", {&*ring}, capture_snap);
    writer.start(0);
    setup.capture_ring = &*ring;
    setup.capture_writer = &writer;
  }
  nic::dpdk::DpdkPort port(setup, payload, directory);
  nic::Packet packet;
  packet.opcode = nic::opcode::kWriteMiddle;
  packet.payload_bytes = pmtu;
  packet.dscp = 26;
  packet.ecn = nic::ecn::kEct0;
  packet.udp_source_port = 49152;
  packet.dest_qpn = one_route().responder.qpn;
  packet.wire_bytes = nic::wire_bytes(packet, {});
  frame_bytes = nic::frame_bytes(packet, {}) - nic::kFcsBytes;
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  uint64_t sent = 0;
  while (true) {
    for (int i = 0; i < 4096; ++i) {
      packet.psn = static_cast<uint32_t>(sent + i) & nic::kPsnMask;
      if (spray_values > 0) {
        packet.udp_source_port = static_cast<uint16_t>(0xC000 | ((sent + i) % spray_values));
      }
      port.transmit(packet, 0);
    }
    sent += 4096;
    if (std::chrono::steady_clock::now() >= end) break;
  }
  port.poll(0);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto& counters = port.counters();
  if (capture_snap > 0) {
    writer.stop();
    std::remove(capture_file.c_str());
    if (lost != nullptr) {
      *lost = static_cast<double>(ring->lost()) / static_cast<double>(counters.tx_frames);
    }
  }
  if (counters.tx_dropped != 0) {
    std::fprintf(stderr, "bench_dpdk: %llu frames dropped\n",
                 static_cast<unsigned long long>(counters.tx_dropped));
  }
  return static_cast<double>(counters.tx_frames) / elapsed / 1e6;
}

// etwire's transmit rate against testpmd's, at least: a regression on the transmit path shows as
// MISSED in the table.
constexpr double kTestpmdRatioTarget = 0.9;

// The median of testpmd's per-period Tx-pps over `seconds`, or 0 when it cannot run.
double testpmd_mpps(uint32_t frame_bytes, double seconds) {
  const std::string command =
      "timeout -s INT " + std::to_string(static_cast<int>(seconds) + 3) +
      " dpdk-testpmd -l 0,1 --main-lcore 1 --no-pci --no-huge --no-shconf -m 1024 --no-telemetry "
      "--log-level=warning --vdev net_null0,copy=1 -- --forward-mode=txonly --txpkts=" +
      std::to_string(frame_bytes) + " --mbuf-size=" + std::to_string(frame_bytes + 256) +
      " --stats-period=1 --nb-cores=1 --total-num-mbufs=8192 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return 0;
  std::vector<double> rates;
  char line[512];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    unsigned long long pps = 0;
    if (std::sscanf(line, " Tx-pps: %llu", &pps) == 1 && pps > 0) {
      rates.push_back(static_cast<double>(pps) / 1e6);
    }
  }
  pclose(pipe);
  if (rates.empty()) return 0;
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

class Discard final : public transport::FlowObserver {
 public:
  void on_flow_delivered(const transport::FlowRecord&) override {}
  void on_flow_finished(const transport::FlowRecord&) override {}
};

struct Pacing {
  double achieved_bps = 0;
  double gap_p50_ns = 0;
  double gap_p99_ns = 0;
  double expected_gap_ns = 0;
  clock::Nanos catch_up = 0;
  uint16_t tx_descriptors = 0;
  // Rounds of the loop longer than the catch-up (held up, or busy catching up), and the longest:
  // a deficit beyond the catch-up is lost for good.
  uint64_t long_rounds = 0;
  clock::Nanos longest_round = 0;
};

// Sends through the transport at `speed_bps` for one second of the wall clock, with the port's
// catch-up as in a run. No ACK ever comes back (net_null drops every frame and, with no-rx,
// delivers none), which does not stop the sender: the transport has no window but its PSN space,
// far from full in a second at these rates, and the retransmission timer is set beyond the test.
Pacing pacing(uint64_t speed_bps, uint32_t pmtu, uint16_t tx_descriptors) {
  config::TransportConfig config;
  config.pmtu = pmtu;
  config.dcqcn.enabled = false;
  config.retransmission = config::Retransmission::kFixed;
  config.retransmit_timeout_ns = 10'000'000'000;
  clock::WallClock clock;
  Discard discard;
  frame::PayloadPattern payload(pmtu, pmtu);
  nic::WireDirectory directory;
  directory.add(0, one_route());
  static int round = 0;
  nic::dpdk::DpdkPortSetup setup = null_port(1, pmtu, speed_bps, "pace" + std::to_string(round++));
  setup.tx_descriptors =
      tx_descriptors != 0 ? tx_descriptors : config::default_tx_descriptors(speed_bps);
  nic::dpdk::DpdkPort port(setup, payload, directory);
  transport::Transport transport(config, clock, discard);
  config::PortQos qos;
  transport.set_catch_up(transport.add_port(port, qos, {}), port.catch_up());
  Pacing result;
  result.catch_up = port.catch_up();
  result.tx_descriptors = setup.tx_descriptors;
  // Written once before the clock starts, so that the loop takes no page faults on it.
  std::vector<clock::Nanos> times(1 << 22, 0);
  size_t recorded = 0;
  clock.restart();
  // The requester half only: the frames go to a sink, nothing answers.
  const nic::WireRoute route = one_route();
  transport.open_requester(0, route.requester.qpn, 0, route.responder.qpn, 49152);
  // Enough bytes for well over a second at the highest rate tried.
  for (int i = 0; i < 64; ++i) transport.post(route.requester.qpn, 1ull << 30, {});
  const clock::Nanos end = clock::kNanosPerSecond;
  uint64_t frames_before = 0;
  uint64_t bytes_at_end = 0;
  clock::Nanos measured_at = 0;
  clock::Nanos last_round = 0;
  while (true) {
    clock.poll();
    const clock::Nanos now = clock.last_read();
    if (now - last_round > result.catch_up) ++result.long_rounds;
    result.longest_round = std::max(result.longest_round, now - last_round);
    last_round = now;
    port.poll(now);
    const uint64_t frames = port.counters().tx_frames;
    if (frames != frames_before && recorded < times.size()) times[recorded++] = now;
    frames_before = frames;
    if (now >= end) {
      bytes_at_end = port.counters().tx_bytes;
      measured_at = now;
      break;
    }
  }
  // Over the time actually elapsed when the counter was read: the loop may see the second end
  // late, and will have caught up to that moment.
  result.achieved_bps =
      static_cast<double>(bytes_at_end) * 8.0 * 1e9 / static_cast<double>(measured_at);
  std::vector<double> gaps;
  for (size_t i = 1; i < recorded; ++i)
    gaps.push_back(static_cast<double>(times[i] - times[i - 1]));
  std::sort(gaps.begin(), gaps.end());
  if (!gaps.empty()) {
    result.gap_p50_ns = gaps[gaps.size() / 2];
    result.gap_p99_ns = gaps[gaps.size() * 99 / 100];
  }
  nic::Packet full;
  full.opcode = nic::opcode::kWriteMiddle;
  full.payload_bytes = pmtu;
  result.expected_gap_ns = nic::wire_bytes(full, {}) * 8.0 * 1e9 / static_cast<double>(speed_bps);
  return result;
}

// The transmit loop with a new UDP source port on every frame (transport.entropy spray) beside
// the same loop on one source port.
void print_spray_table(double seconds) {
  std::printf("\nTransmit with the source port sprayed over 256 values, every frame, same loop\n");
  std::printf("%6s %13s %13s %9s\n", "pmtu", "per_qp_Mpps", "spray_Mpps", "ratio");
  for (uint32_t pmtu : {4096u, 1024u}) {
    uint32_t frame_bytes = 0;
    const double one = etwire_mpps(pmtu, seconds, frame_bytes);
    const double sprayed = etwire_mpps(pmtu, seconds, frame_bytes, 0, nullptr, 256);
    std::printf("%6u %13.2f %13.2f %9.2f\n", pmtu, one, sprayed, sprayed / one);
  }
}

// The transmit loop capturing every frame (telemetry.record.pcap), headers only and whole, beside
// the same loop without capture.
void print_capture_table(double seconds) {
  std::printf("\nTransmit with capture, same loop; a writer thread writes the file\n");
  // written: the frames the writer kept up with, (1 - lost) of those the port sent.
  std::printf("%6s %6s %13s %13s %9s %9s %13s\n", "pmtu", "snap", "off_Mpps", "capture_Mpps",
              "ratio", "lost_%", "written_Mfps");
  for (uint32_t pmtu : {4096u, 1024u}) {
    for (uint32_t snap : {128u, pmtu + 131}) {
      uint32_t frame_bytes = 0;
      const double off = etwire_mpps(pmtu, seconds, frame_bytes);
      double lost = 0;
      const double on = etwire_mpps(pmtu, seconds, frame_bytes, snap, &lost);
      std::printf("%6u %6u %13.2f %13.2f %9.2f %9.1f %13.2f\n", pmtu, std::min(snap, frame_bytes),
                  off, on, on / off, 100.0 * lost, on * (1 - lost));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--seconds" && i + 1 < argc) {
      options.seconds = std::atof(argv[++i]);
    } else if (flag == "--skip-testpmd") {
      options.testpmd = false;
    } else if (flag == "--skip-capture") {
      options.capture = false;
    } else if (flag == "--skip-spray") {
      options.spray = false;
    } else if (flag == "--skip-pacing") {
      options.pacing = false;
    } else if (flag == "--rates" && i + 1 < argc) {
      options.rates_gbps.clear();
      for (const char* p = argv[++i]; *p != '\0';) {
        char* end = nullptr;
        const double rate = std::strtod(p, &end);
        if (end == p || rate <= 0) {
          std::fprintf(stderr, "bench_dpdk: --rates wants Gb/s figures separated by commas\n");
          return 2;
        }
        options.rates_gbps.push_back(rate);
        p = *end == ',' ? end + 1 : end;
      }
    } else if (flag == "--tx-descriptors" && i + 1 < argc) {
      options.tx_descriptors = static_cast<uint16_t>(std::atoi(argv[++i]));
    } else {
      std::printf(
          "usage: bench_dpdk [--seconds S] [--skip-testpmd] [--skip-capture] [--skip-spray] "
          "[--skip-pacing] [--rates G,G,...] [--tx-descriptors N]\n");
      return flag == "--help" || flag == "-h" ? 0 : 2;
    }
  }
  nic::dpdk::start_eal({"--no-pci", "--no-huge", "--no-shconf", "-m", "1024", "-l", "0",
                        "--no-telemetry", "--log-level=warning", "--vdev=net_null0,copy=1",
                        "--vdev=net_null1,no-rx=1"});
  std::printf("Transmit, one core, net_null copy=1, WRITE MIDDLE IPv4 with ICRC, %.0f s each\n",
              options.seconds);
  std::printf("%6s %11s %13s %14s %7s %7s\n", "pmtu", "frame_B", "etwire_Mpps", "testpmd_Mpps",
              "ratio", "target");
  for (uint32_t pmtu : {4096u, 1024u}) {
    uint32_t frame_bytes = 0;
    const double ours = etwire_mpps(pmtu, options.seconds, frame_bytes);
    const double theirs = options.testpmd ? testpmd_mpps(frame_bytes, options.seconds) : 0;
    const double ratio = theirs > 0 ? ours / theirs : 0.0;
    // "-" when testpmd did not run (not installed: bench/build-testpmd.sh builds it).
    const char* verdict = theirs <= 0 ? "-" : ratio >= kTestpmdRatioTarget ? "met" : "MISSED";
    std::printf("%6u %11u %13.2f %14.2f %7.2f %7s\n", pmtu, frame_bytes, ours, theirs, ratio,
                verdict);
  }
  // The same transmit loop capturing every frame (telemetry.record.pcap), headers only and whole.
  if (options.capture) print_capture_table(options.seconds);
  if (options.spray) print_spray_table(options.seconds);
  if (!options.pacing) {
    rte_eal_cleanup();
    return 0;
  }
  std::printf("\nPacing, one QP on the wall clock, 1 s, PMTU 4096\n");
  std::printf("%10s %14s %9s %13s %11s %11s %8s %11s %11s %13s\n", "target", "achieved", "error_%",
              "frame_gap_ns", "gap_p50_ns", "gap_p99_ns", "tx_desc", "catch_up_us", "long_rounds",
              "longest_us");
  for (double gbps : options.rates_gbps) {
    const auto speed = static_cast<uint64_t>(gbps * 1e9);
    const Pacing p = pacing(speed, 4096, options.tx_descriptors);
    std::printf("%8.0fG %12.4fG %9.4f %13.1f %11.0f %11.0f %8u %11.1f %11llu %13.1f\n", gbps,
                p.achieved_bps / 1e9,
                100.0 * (p.achieved_bps - static_cast<double>(speed)) / static_cast<double>(speed),
                p.expected_gap_ns, p.gap_p50_ns, p.gap_p99_ns, p.tx_descriptors,
                static_cast<double>(p.catch_up) / 1e3,
                static_cast<unsigned long long>(p.long_rounds),
                static_cast<double>(p.longest_round) / 1e3);
  }
  rte_eal_cleanup();
  return 0;
}
