#include "runner/captured_port_frames.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace etwire::runner {

namespace {

// Every RoCEv2 payload fits: PMTUs end at 4096.
constexpr uint32_t kLargestPayload = 4096;

const char* status_text(frame::FrameStatus status) {
  switch (status) {
    case frame::FrameStatus::kTruncated:
      return "it ends before its headers or its IP length say";
    case frame::FrameStatus::kBadHeader:
      return "its IP or BTH header is not valid";
    case frame::FrameStatus::kBadIcrc:
      return "its ICRC is wrong";
    case frame::FrameStatus::kUnknownOpcode:
      return "its BTH opcode is not one etwire sends";
    default:
      return "it is not RoCEv2";
  }
}

}  // namespace

std::array<uint8_t, 17> address_key(uint8_t ip_version, const std::array<uint8_t, 16>& ip) {
  std::array<uint8_t, 17> key{};
  key[0] = ip_version;
  std::copy_n(ip.begin(), ip_version == 4 ? 4 : 16, key.begin() + 1);
  return key;
}

CapturedPortFrames::CapturedPortFrames(const std::string& path, size_t port,
                                       const config::PortQos& qos, const PortsByAddress& ports)
    : reader_(path),
      port_(port),
      qos_(qos),
      ports_(ports),
      pattern_(kLargestPayload, kLargestPayload),
      frames_(pattern_) {
  read_record();
}

void CapturedPortFrames::fail(const std::string& what) const {
  throw nic::capture::CaptureReadError(
      fmt::format("{}: frame {}: {}", reader_.path(), record_.number, what));
}

bool CapturedPortFrames::read_record() {
  pending_ = reader_.next(record_);
  if (pending_ && !record_.direction) {
    fail(
        "no direction (inbound or outbound) in its packet flags: the replay reads the capture "
        "files etwire writes (telemetry.record.pcap)");
  }
  return pending_;
}

bool CapturedPortFrames::parse(frame::ParsedFrame& parsed) {
  if (record_.frame.size() < record_.wire_length) {
    fail(
        fmt::format("cut to {} of its {} bytes by the capture's snap length; the replay needs "
                    "whole frames (capture.snap_length: 0)",
                    record_.frame.size(), record_.wire_length));
  }
  const frame::FrameStatus status =
      frames_.parse(record_.frame.data(), record_.frame.size(), parsed);
  if (status == frame::FrameStatus::kRoce || status == frame::FrameStatus::kPfc) return true;
  if (status != frame::FrameStatus::kNotRoce &&
      record_.direction == nic::capture::Direction::kTransmit) {
    fail(fmt::format("a frame this port sent cannot be read: {}", status_text(status)));
  }
  return false;
}

bool CapturedPortFrames::next(twin::SentFrame& out) {
  for (; pending_; read_record()) {
    frame::ParsedFrame parsed;
    const bool readable = parse(parsed);
    const clock::Nanos at = record_.stamp - origin_;
    if (record_.direction == nic::capture::Direction::kReceive) {
      if (readable) {
        received_.count(parsed.packet, at);
        if (on_received_) on_received_(parsed.packet, at);
      }
      continue;
    }
    if (!readable) {
      ++not_replayed_;
      continue;
    }
    out.at = at;
    out.packet = parsed.packet;
    if (parsed.packet.kind == nic::PacketKind::kRoce) {
      const auto to =
          ports_.find(address_key(parsed.addresses.ip_version, parsed.addresses.dst_ip));
      if (to == ports_.end()) {
        fail(
            "sent to an IP address that no port of the configuration has (are the "
            "configuration and the capture of the same run?)");
      }
      out.packet.dst_port = static_cast<uint32_t>(to->second);
      // An untagged frame carries no 802.1p class: the twin's queues and PFC take the class the
      // port sent that kind of packet on, as the twin's own transport does.
      if (parsed.addresses.vlan_id == 0) {
        out.packet.priority = out.packet.is_data()                     ? qos_.data.priority
                              : out.packet.opcode == nic::opcode::kCnp ? qos_.cnp.priority
                                                                       : qos_.ack.priority;
      }
      if (out.packet.is_data()) {
        if (data_sent_to_.size() <= to->second) data_sent_to_.resize(to->second + 1);
        ++data_sent_to_[to->second];
      }
    }
    out.packet.src_port = static_cast<uint32_t>(port_);
    read_record();
    return true;
  }
  return false;
}

void CapturedPortFrames::finish() {
  twin::SentFrame ignored;
  while (next(ignored)) {
  }
}

PortsByAddress ports_by_address(const control::RunPlan& plan) {
  PortsByAddress ports;
  const auto add = [&ports](size_t port, const config::Ipv4Address& v4,
                            const std::optional<config::Ipv6Address>& v6) {
    std::array<uint8_t, 16> bytes{};
    for (int i = 0; i < 4; ++i) bytes[i] = static_cast<uint8_t>(v4.value >> (24 - 8 * i));
    ports.emplace(address_key(4, bytes), port);
    if (v6) ports.emplace(address_key(6, v6->bytes), port);
  };
  for (size_t p = 0; p < plan.config.ports.size(); ++p) {
    add(p, plan.config.ports[p].ipv4, plan.config.ports[p].ipv6);
  }
  for (size_t job = 0; job < plan.addresses->jobs(); ++job) {
    for (const control::RankEndpoint& rank : plan.addresses->job(job)) {
      if (rank.host >= 0) add(rank.port, rank.ipv4, rank.ipv6);
    }
  }
  return ports;
}

std::vector<std::unique_ptr<CapturedPortFrames>> open_lab_captures(const control::RunPlan& plan,
                                                                   const std::string& lab,
                                                                   const PortsByAddress& ports) {
  std::vector<std::unique_ptr<CapturedPortFrames>> captures;
  for (size_t p = 0; p < plan.config.ports.size(); ++p) {
    const std::filesystem::path path =
        std::filesystem::path(lab) / "capture" / (plan.config.ports[p].name + ".pcapng");
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) {
      throw nic::capture::CaptureReadError(
          fmt::format("{}: no such capture file: the lab run must record its frames "
                      "(telemetry.record.pcap: true) into {}",
                      path.string(), lab));
    }
    captures.push_back(
        std::make_unique<CapturedPortFrames>(path.string(), p, plan.config.ports[p].qos, ports));
  }
  std::optional<clock::Nanos> origin;
  for (const auto& capture : captures) {
    if (const auto first = capture->first_stamp())
      origin = std::min(origin.value_or(*first), *first);
  }
  for (const auto& capture : captures) capture->set_origin(origin.value_or(0));
  return captures;
}

}  // namespace etwire::runner
