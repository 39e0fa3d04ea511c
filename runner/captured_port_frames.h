// One lab port's capture file read as the frames it sent, for the as-sent replay (twin/replay):
// outbound RoCEv2 and PFC frames become packets from that port, addressed to the port whose
// address the frame is sent to; inbound frames are counted as what the lab's port received, the
// same way the replay counts the twin's deliveries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/qos_config.h"
#include "control/plan/run_plan.h"
#include "nic/capture/capture_reader.h"
#include "nic/frame/frame_reader.h"
#include "nic/frame/payload_pattern.h"
#include "twin/replay/arrival_tally.h"
#include "twin/replay/as_sent_replay.h"

namespace etwire::runner {

// The run's ports by the IP addresses frames carry (FrameAddresses::src_ip and dst_ip: the
// version, then 16 bytes in network order, IPv4 in the first 4).
using PortsByAddress = std::map<std::array<uint8_t, 17>, size_t>;
std::array<uint8_t, 17> address_key(uint8_t ip_version, const std::array<uint8_t, 16>& ip);

class CapturedPortFrames final : public twin::SentFrames {
 public:
  // Opens `path`, the capture of port `port`, which sent with `qos`; throws
  // nic::capture::CaptureReadError.
  CapturedPortFrames(const std::string& path, size_t port, const config::PortQos& qos,
                     const PortsByAddress& ports);

  // The stamp of the file's first frame, either way (nullopt for an empty file): the replay's
  // time 0 is the earliest of these.
  std::optional<clock::Nanos> first_stamp() const {
    return pending_ ? std::optional<clock::Nanos>(record_.stamp) : std::nullopt;
  }
  // Stamps are counted from `origin` from here on; set before the first next().
  void set_origin(clock::Nanos origin) { origin_ = origin; }
  // Shown every inbound RoCEv2 or PFC frame as it is read (its stamp from the origin), besides
  // received()'s count.
  void set_on_received(std::function<void(const nic::Packet&, clock::Nanos)> listener) {
    on_received_ = std::move(listener);
  }

  // The next frame the port sent. Throws nic::capture::CaptureReadError naming the file and the
  // frame: a frame without its direction (not a capture etwire wrote), one cut by a snap length,
  // one sent to an address no port has, or a damaged file.
  bool next(twin::SentFrame& out) override;
  // Reads the rest of the file (its last inbound frames) into received().
  void finish();

  // Inbound, as the lab's port captured them, stamps from the origin.
  const twin::ArrivalTally& received() const { return received_; }
  // Outbound data frames by the port they were sent to.
  const std::vector<uint64_t>& data_sent_to() const { return data_sent_to_; }
  // The file's own count of the frames it lacks, after finish() (CaptureReader::statistics).
  std::optional<nic::capture::CaptureReader::Statistics> statistics() const {
    return reader_.statistics();
  }
  // Outbound frames passed over: neither RoCEv2 nor PFC (ARP, say).
  uint64_t not_replayed() const { return not_replayed_; }

 private:
  bool read_record();
  // Parses the current record; false when it is neither RoCEv2 nor PFC.
  bool parse(frame::ParsedFrame& parsed);
  [[noreturn]] void fail(const std::string& what) const;

  nic::capture::CaptureReader reader_;
  size_t port_;
  config::PortQos qos_;
  const PortsByAddress& ports_;
  frame::PayloadPattern pattern_;
  frame::FrameReader frames_;
  nic::capture::CaptureRecord record_;
  bool pending_ = false;  // record_ holds a frame not yet used
  clock::Nanos origin_ = 0;
  twin::ArrivalTally received_;
  std::function<void(const nic::Packet&, clock::Nanos)> on_received_;
  std::vector<uint64_t> data_sent_to_;
  uint64_t not_replayed_ = 0;
};

// The ports of `plan` by every address its ports and ranks have.
PortsByAddress ports_by_address(const control::RunPlan& plan);

// Every port's capture in `lab` (<lab>/capture/<port>.pcapng), by configured port, their stamps
// counted from the earliest frame of all. Throws nic::capture::CaptureReadError naming a missing
// or unreadable file.
std::vector<std::unique_ptr<CapturedPortFrames>> open_lab_captures(const control::RunPlan& plan,
                                                                   const std::string& lab,
                                                                   const PortsByAddress& ports);

}  // namespace etwire::runner
