// The table of RDMA sysfs counter files that feed etwire's port counters, and the reader that
// resolves it for one device port.
#include "nic/verbs/rnic_counters.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace etwire::nic::verbs {

namespace {

// Names come from the kernel drivers' counter descriptor tables (drivers/infiniband/hw/mlx5/
// counters.c, bnxt_re/hw_counters.c, irdma/verbs.c) and from the core's port counter attributes
// (drivers/infiniband/core/sysfs.c). Only names found there are listed.
//
// Bytes: the InfiniBand port counters (and the drivers' byte counters) count the packet from its
// first header to its last byte, not the wire: no preamble, no inter-frame gap, which etwire's own
// ports include in tx_bytes/rx_bytes. A device's bytes therefore read lower than an etwire port
// would count for the same traffic; they are not converted because the frame count per sample is
// not known exactly enough to add the overhead back.
constexpr std::array kSources{
    // A driver's own RoCE-only counters come first where it has them: they are 64 bits wide and
    // count only RoCE, while bnxt_re's port counters on older chips and VFs mirror the function's
    // whole statistics context. On mlx5 the port counters are the RoCE vport counters.
    RnicCounterSource{"tx_bytes", "hw_counters/tx_roce_only_bytes", 1, "bnxt_re"},
    // PortXmitData counts octets divided by 4 (IBA PortCounters), and the kernel shows it as such.
    RnicCounterSource{"tx_bytes", "counters/port_xmit_data", 4, "ib_core"},
    RnicCounterSource{"tx_bytes", "hw_counters/tx_bytes", 1, "bnxt_re"},
    RnicCounterSource{"rx_bytes", "hw_counters/rx_roce_only_bytes", 1, "bnxt_re"},
    RnicCounterSource{"rx_bytes", "counters/port_rcv_data", 4, "ib_core"},
    RnicCounterSource{"rx_bytes", "hw_counters/rx_bytes", 1, "bnxt_re"},
    RnicCounterSource{"tx_packets", "hw_counters/tx_roce_only_pkts", 1, "bnxt_re"},
    RnicCounterSource{"tx_packets", "counters/port_xmit_packets", 1, "ib_core"},
    RnicCounterSource{"tx_packets", "hw_counters/tx_pkts", 1, "bnxt_re"},
    RnicCounterSource{"rx_packets", "hw_counters/rx_roce_only_pkts", 1, "bnxt_re"},
    RnicCounterSource{"rx_packets", "counters/port_rcv_packets", 1, "ib_core"},
    RnicCounterSource{"rx_packets", "hw_counters/rx_pkts", 1, "bnxt_re"},
    // CE-marked RoCE packets that reached the notification point.
    RnicCounterSource{"ecn_marked_received", "hw_counters/np_ecn_marked_roce_packets", 1, "mlx5"},
    RnicCounterSource{"ecn_marked_received", "hw_counters/rx_ecn_marked_pkts", 1, "bnxt_re"},
    RnicCounterSource{"ecn_marked_received", "hw_counters/RxECNMrkd", 1, "irdma"},
    // CNPs the notification point generated.
    RnicCounterSource{"cnps_sent", "hw_counters/np_cnp_sent", 1, "mlx5"},
    RnicCounterSource{"cnps_sent", "hw_counters/tx_cnp_pkts", 1, "bnxt_re"},
    RnicCounterSource{"cnps_sent", "hw_counters/cnpSent", 1, "irdma"},
    // CNPs the reaction point acted on. mlx5 and irdma count separately the ones they ignored
    // (rp_cnp_ignored, cnpIgnored); bnxt_re counts every CNP that arrived.
    RnicCounterSource{"cnps_received", "hw_counters/rp_cnp_handled", 1, "mlx5"},
    RnicCounterSource{"cnps_received", "hw_counters/rx_cnp_pkts", 1, "bnxt_re"},
    RnicCounterSource{"cnps_received", "hw_counters/cnpHandled", 1, "irdma"},
    // Only the device's own discards: what a switch drops shows up as missing_packets instead.
    // bnxt_re: RoCE packets the function discarded on receive; mlx5: packets dropped for want of
    // a receive WQE; then the port counter of outbound packets the port discarded.
    RnicCounterSource{"drops", "hw_counters/rx_roce_discards", 1, "bnxt_re"},
    RnicCounterSource{"drops", "hw_counters/out_of_buffer", 1, "mlx5"},
    RnicCounterSource{"drops", "hw_counters/rx_out_of_buffer", 1, "bnxt_re"},
    RnicCounterSource{"drops", "counters/port_xmit_discards", 1, "ib_core"},
    // Out-of-sequence packets the responder received (and dropped, on bnxt_re). This counts
    // arrivals past a gap, not the packets missing from it: a lower bound on the right order of
    // magnitude, one per gap or more.
    RnicCounterSource{"missing_packets", "hw_counters/out_of_sequence", 1, "mlx5"},
    RnicCounterSource{"missing_packets", "hw_counters/oos_drop_count", 1, "bnxt_re"},
    // retransmitted_packets has no source: no driver counts retransmitted packets. mlx5's
    // roce_adp_retrans counts adaptive-retransmission events and packet_seq_err counts sequence
    // NAKs received, each followed by a go-back-N of unknown length.
    //
    // Transport retry timeouts of the requester.
    RnicCounterSource{"timeouts", "hw_counters/local_ack_timeout_err", 1, "mlx5"},
    RnicCounterSource{"timeouts", "hw_counters/to_retransmits", 1, "bnxt_re"},
};

constexpr std::string_view kHwCountersPrefix = "hw_counters/";

bool is_regular_file(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);
}

// Sysfs counters are small decimal files ("12345\n"). One read() suffices: the kernel renders the
// whole value into the first page.
uint64_t read_counter_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw std::runtime_error(
        fmt::format("cannot open counter file {}: {}", path, std::strerror(errno)));
  }
  std::array<char, 64> buffer{};
  ssize_t length = 0;
  do {
    length = ::read(fd, buffer.data(), buffer.size());
  } while (length < 0 && errno == EINTR);
  const int read_errno = errno;
  ::close(fd);
  if (length < 0) {
    throw std::runtime_error(
        fmt::format("cannot read counter file {}: {}", path, std::strerror(read_errno)));
  }
  const std::string_view text(buffer.data(), static_cast<size_t>(length));
  size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' ')) --end;
  uint64_t value = 0;
  bool valid = end > 0 && static_cast<size_t>(length) < buffer.size();
  for (size_t i = 0; valid && i < end; ++i) {
    const char c = text[i];
    const auto digit = static_cast<uint64_t>(c - '0');
    if (c < '0' || c > '9' || value > (UINT64_MAX - digit) / 10) {
      valid = false;
    } else {
      value = value * 10 + digit;
    }
  }
  if (!valid) {
    throw std::runtime_error(fmt::format("counter file {} does not hold a counter: \"{}\"", path,
                                         std::string(text.substr(0, end))));
  }
  return value;
}

}  // namespace

std::span<const RnicCounterSource> rnic_counter_sources() {
  return kSources;
}

RnicCounterReader::RnicCounterReader(std::string sysfs_root, std::string device, uint32_t port)
    : device_(std::move(device)), port_(port) {
  const std::string device_dir = fmt::format("{}/{}", sysfs_root, device_);
  const std::string port_dir = fmt::format("{}/ports/{}", device_dir, port_);
  std::error_code error;
  if (!std::filesystem::is_directory(port_dir, error)) {
    throw std::runtime_error(
        fmt::format("{} port {}: no such RDMA port ({} does not exist)", device_, port_, port_dir));
  }
  for (const RnicCounterSource& source : kSources) {
    // The table lists a field's sources together; the first one found wins.
    if (!resolved_.empty() && resolved_.back().field == source.field) continue;
    std::string path = fmt::format("{}/{}", port_dir, source.file);
    if (!is_regular_file(path)) {
      if (!source.file.starts_with(kHwCountersPrefix)) continue;
      // Device-wide hw_counters (port 0 in the kernel's terms) when the port has no such file.
      path = fmt::format("{}/{}", device_dir, source.file);
      if (!is_regular_file(path)) continue;
    }
    resolved_.push_back(Resolved{std::string(source.field), std::move(path), source.scale});
  }
  exposed_.reserve(resolved_.size());
  for (const Resolved& counter : resolved_) exposed_.emplace_back(counter.field, counter.path);
}

std::vector<std::pair<std::string, uint64_t>> RnicCounterReader::read() const {
  std::vector<std::pair<std::string, uint64_t>> values;
  values.reserve(resolved_.size());
  for (const Resolved& counter : resolved_) {
    // The 4-octet counters reach 2^62 only after exabytes; the product does not overflow in
    // practice.
    values.emplace_back(counter.field, read_counter_file(counter.path) * counter.scale);
  }
  return values;
}

}  // namespace etwire::nic::verbs
