#include "dataplane/verbs/datagram_cables.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "nic/packet.h"

namespace etwire::dataplane {

namespace {

constexpr unsigned kDatagramBurst = 64;
// Deep enough for a burst of every peer's packets at once; the kernel caps it at
// net.core.rmem_max unless the process may force it (root).
constexpr int kSocketBuffer = 8 << 20;

sockaddr_in loopback(uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  return address;
}

std::runtime_error socket_error(const char* call, size_t port) {
  return std::runtime_error(fmt::format("the software RNIC's cable of run port {}: {} failed: {}",
                                        port, call, std::strerror(errno)));
}

}  // namespace

class DatagramCables::End final : public nic::Port {
 public:
  End(size_t index, uint64_t speed_bps, const std::vector<sockaddr_in>& peers)
      : index_(index), speed_bps_(speed_bps), peers_(peers) {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw socket_error("socket", index);
    for (int option : {SO_RCVBUFFORCE, SO_SNDBUFFORCE}) {
      // Not allowed without privilege: then the plain option, which the kernel caps.
      if (::setsockopt(fd_, SOL_SOCKET, option, &kSocketBuffer, sizeof(kSocketBuffer)) != 0) {
        const int plain = option == SO_RCVBUFFORCE ? SO_RCVBUF : SO_SNDBUF;
        ::setsockopt(fd_, SOL_SOCKET, plain, &kSocketBuffer, sizeof(kSocketBuffer));
      }
    }
    sockaddr_in any = loopback(0);
    if (::bind(fd_, reinterpret_cast<const sockaddr*>(&any), sizeof(any)) != 0) {
      const auto error = socket_error("bind to 127.0.0.1", index);
      ::close(fd_);
      throw error;
    }
    socklen_t length = sizeof(any);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&any), &length);
    udp_port_ = ntohs(any.sin_port);
    for (unsigned i = 0; i < kDatagramBurst; ++i) {
      vectors_[i] = {&arrived_[i], sizeof(nic::Packet)};
      messages_[i].msg_hdr.msg_iov = &vectors_[i];
      messages_[i].msg_hdr.msg_iovlen = 1;
    }
  }
  ~End() override { ::close(fd_); }
  End(const End&) = delete;
  End& operator=(const End&) = delete;

  void transmit(const nic::Packet& packet, clock::Nanos) override {
    if (packet.dst_port >= peers_.size()) {
      ++counters_.drops;
      return;
    }
    const sockaddr_in& to = peers_[packet.dst_port];
    const ssize_t sent = ::sendto(fd_, &packet, sizeof(packet), MSG_DONTWAIT,
                                  reinterpret_cast<const sockaddr*>(&to), sizeof(to));
    if (sent != static_cast<ssize_t>(sizeof(packet))) {
      ++counters_.drops;
      return;
    }
    ++counters_.tx_packets;
    counters_.tx_bytes += packet.wire_bytes;
  }
  uint64_t speed_bps() const override { return speed_bps_; }
  void set_receiver(nic::PacketReceiver* receiver) override { receiver_ = receiver; }

  size_t receive(clock::Nanos now) {
    size_t total = 0;
    for (;;) {
      const int n = ::recvmmsg(fd_, messages_.data(), kDatagramBurst, MSG_DONTWAIT, nullptr);
      if (n <= 0) return total;
      for (int i = 0; i < n; ++i) {
        const nic::Packet& packet = arrived_[static_cast<size_t>(i)];
        // Only whole packets for this port: anything else on the socket is not a cable's.
        if (messages_[static_cast<size_t>(i)].msg_len != sizeof(nic::Packet) ||
            packet.dst_port != index_ || receiver_ == nullptr) {
          continue;
        }
        ++counters_.rx_packets;
        counters_.rx_bytes += packet.wire_bytes;
        receiver_->receive(packet, now);
      }
      total += static_cast<size_t>(n);
      if (static_cast<unsigned>(n) < kDatagramBurst) return total;
    }
  }

  uint16_t udp_port() const { return udp_port_; }
  const CableCounters& counters() const { return counters_; }

 private:
  size_t index_;
  uint64_t speed_bps_;
  const std::vector<sockaddr_in>& peers_;
  int fd_ = -1;
  uint16_t udp_port_ = 0;
  nic::PacketReceiver* receiver_ = nullptr;
  CableCounters counters_;
  std::array<nic::Packet, kDatagramBurst> arrived_{};
  std::array<iovec, kDatagramBurst> vectors_{};
  std::array<mmsghdr, kDatagramBurst> messages_{};
};

DatagramCables::DatagramCables(const std::vector<bool>& here,
                               const std::vector<uint64_t>& speeds_bps,
                               const cluster::Session& session)
    : ends_(here.size()), peers_(here.size()) {
  for (size_t p = 0; p < session.hosts().size(); ++p) {
    if (session.hosts()[p] != session.host()) {
      throw std::runtime_error(fmt::format(
          "the software RNIC cables emulator processes on one machine only, and process {} runs "
          "on {} while process {} runs on {}: between machines, use RDMA NICs (verbs.rnic: "
          "hardware)",
          p, session.hosts()[p], session.rank(), session.host()));
    }
  }
  std::string mine;
  for (size_t p = 0; p < here.size(); ++p) {
    if (!here[p]) continue;
    ends_[p] = std::make_unique<End>(p, speeds_bps.at(p), peers_);
    mine += fmt::format("{} {}\n", p, ends_[p]->udp_port());
  }
  for (const std::string& theirs : session.all_gather(mine)) {
    size_t at = 0;
    while (at < theirs.size()) {
      const size_t end = theirs.find('\n', at);
      unsigned long port = 0;
      unsigned long udp = 0;
      if (std::sscanf(theirs.c_str() + at, "%lu %lu", &port, &udp) == 2 && port < here.size()) {
        peers_[port] = loopback(static_cast<uint16_t>(udp));
      }
      at = end == std::string::npos ? theirs.size() : end + 1;
    }
  }
  for (size_t p = 0; p < here.size(); ++p) {
    if (peers_[p].sin_port == 0) {  // nobody announced it
      throw std::runtime_error(
          fmt::format("the software RNIC's cables: no emulator process drives run port {}", p));
    }
  }
}

DatagramCables::~DatagramCables() = default;

nic::Port& DatagramCables::port(size_t port) {
  return *ends_.at(port);
}

const CableCounters& DatagramCables::counters(size_t port) const {
  return ends_.at(port)->counters();
}

size_t DatagramCables::receive(clock::Nanos now) {
  size_t total = 0;
  for (auto& end : ends_) {
    if (end) total += end->receive(now);
  }
  return total;
}

}  // namespace etwire::dataplane
