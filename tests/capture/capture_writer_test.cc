// The capture path below the data planes: the ring's slots, the writer's files as libpcap reads
// them back (timestamps, lengths, bytes), its limits, and the tap that captures the twin's
// packets as the frames a DPDK port would send.
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <filesystem>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "nic/capture/capture_writer.h"
#include "nic/capture/frame_capture_ring.h"
#include "nic/capture/twin_capture_point.h"
#include "nic/frame/frame_reader.h"
#include "nic/pfc_frame.h"

namespace etwire::nic::capture {
namespace {

struct ReadFrame {
  int64_t stamp_ns;
  uint32_t length;
  std::vector<uint8_t> bytes;
};

std::vector<ReadFrame> read_pcap(const std::string& path) {
  char error[PCAP_ERRBUF_SIZE];
  pcap_t* handle =
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, error);
  if (handle == nullptr) throw std::runtime_error(error);
  std::vector<ReadFrame> frames;
  pcap_pkthdr* header;
  const u_char* data;
  while (pcap_next_ex(handle, &header, &data) == 1) {
    frames.push_back({header->ts.tv_sec * 1'000'000'000LL + header->ts.tv_usec, header->len,
                      std::vector<uint8_t>(data, data + header->caplen)});
  }
  pcap_close(handle);
  return frames;
}

// A file in this test program's own folder, which goes when the program ends.
std::string temp_file(const std::string& name) {
  struct Folder {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("etwire-capture-test-" + std::to_string(::getpid()));
    Folder() { std::filesystem::create_directories(path); }
    ~Folder() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Folder folder;
  return (folder.path / name).string();
}

std::vector<uint8_t> ramp(size_t n, uint8_t from = 0) {
  std::vector<uint8_t> bytes(n);
  std::iota(bytes.begin(), bytes.end(), from);
  return bytes;
}

TEST(FrameCaptureRing, KeepsSnapLengthBytesInOrderAndRefusesWhenFull) {
  FrameCaptureRing ring(4, 8);
  const std::vector<uint8_t> frame = ramp(20);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(ring.try_push(i, Direction::kTransmit, frame.data() + i, 20 - i, 100 + i));
  }
  EXPECT_FALSE(ring.try_push(9, Direction::kReceive, frame.data(), 20, 20));
  std::vector<CapturedFrame> seen;
  std::vector<std::vector<uint8_t>> bytes;
  EXPECT_EQ(ring.drain([&](const CapturedFrame& f) {
    seen.push_back(f);
    bytes.emplace_back(f.bytes, f.bytes + f.captured);
  }),
            4u);
  ASSERT_EQ(seen.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(seen[i].time, i);
    EXPECT_EQ(seen[i].length, 100u + i);
    EXPECT_EQ(seen[i].captured, 8u);
    EXPECT_EQ(bytes[i], ramp(8, static_cast<uint8_t>(i)));
  }
  // Room again; fewer bytes than the snap length are kept as they are.
  EXPECT_TRUE(ring.try_push(5, Direction::kReceive, frame.data(), 3, 3));
  ring.drain([&](const CapturedFrame& f) { EXPECT_EQ(f.captured, 3u); });
}

TEST(FrameCaptureRing, RefusesSlotCountsThatAreNotPowersOfTwo) {
  EXPECT_THROW(FrameCaptureRing(3, 64), std::invalid_argument);
  EXPECT_THROW(FrameCaptureRing(4, 0), std::invalid_argument);
}

TEST(CaptureWriter, WritesEveryRingOfAFileWithNanosecondTimestamps) {
  FrameCaptureRing a(16, 64), b(16, 64);
  const std::string path = temp_file("two-queues.pcap");
  CaptureWriter writer({});
  writer.add_file(path, {&a, &b}, 64);
  EXPECT_FALSE(writer.capturing());
  constexpr int64_t kEpoch = 1'700'000'000'123'456'789LL;
  writer.start(kEpoch);
  EXPECT_TRUE(writer.capturing());
  const std::vector<uint8_t> frame = ramp(100);
  ASSERT_TRUE(a.try_push(1'000'000'001, Direction::kTransmit, frame.data(), 100, 100));
  ASSERT_TRUE(b.try_push(7, Direction::kReceive, frame.data(), 60, 60));
  writer.stop();
  EXPECT_FALSE(writer.capturing());
  const std::vector<ReadFrame> frames = read_pcap(path);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].stamp_ns, kEpoch + 1'000'000'001);
  EXPECT_EQ(frames[0].length, 100u);
  EXPECT_EQ(frames[0].bytes, ramp(64));
  EXPECT_EQ(frames[1].stamp_ns, kEpoch + 7);
  EXPECT_EQ(frames[1].bytes, ramp(60));
  const CaptureTotals& totals = writer.totals();
  EXPECT_EQ(totals.frames, 2u);
  EXPECT_EQ(totals.bytes, std::filesystem::file_size(path));
  ASSERT_EQ(totals.files.size(), 1u);
  EXPECT_EQ(totals.files[0].frames, 2u);
  EXPECT_FALSE(totals.limit_reached);
}

TEST(CaptureWriter, StopsAtTheFrameLimitAndSaysSo) {
  FrameCaptureRing ring(16, 64);
  const std::string path = temp_file("frame-limit.pcap");
  CaptureWriter writer({0, 3});
  writer.add_file(path, {&ring}, 64);
  writer.start(0);
  const std::vector<uint8_t> frame = ramp(64);
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(ring.try_push(i, Direction::kTransmit, frame.data(), 64, 64));
  writer.stop();
  EXPECT_EQ(read_pcap(path).size(), 3u);
  EXPECT_TRUE(writer.totals().limit_reached);
  EXPECT_EQ(writer.totals().frames_over_limit, 2u);
  EXPECT_FALSE(writer.capturing());
}

TEST(CaptureWriter, StopsAtTheByteLimitWithTheFileWithinIt) {
  FrameCaptureRing ring(16, 64);
  const std::string path = temp_file("byte-limit.pcap");
  // The 24-byte file header and two records of 16 + 64 bytes fit; a third does not.
  CaptureWriter writer({24 + 2 * 80 + 79, 0});
  writer.add_file(path, {&ring}, 64);
  writer.start(0);
  const std::vector<uint8_t> frame = ramp(64);
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(ring.try_push(i, Direction::kTransmit, frame.data(), 64, 64));
  writer.stop();
  EXPECT_EQ(read_pcap(path).size(), 2u);
  EXPECT_EQ(std::filesystem::file_size(path), 24u + 2 * 80);
  EXPECT_TRUE(writer.totals().limit_reached);
}

TEST(CaptureWriter, NamesAFileItCannotCreate) {
  FrameCaptureRing ring(4, 64);
  CaptureWriter writer({});
  try {
    writer.add_file("/nonexistent-etwire-dir/x.pcap", {&ring}, 64);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-etwire-dir/x.pcap"), std::string::npos)
        << e.what();
  }
}

class TwinCapturePointTest : public ::testing::Test {
 protected:
  TwinCapturePointTest() {
    route.requester = {0, 0x101, 0};
    route.responder = {1, 0x202, 0};
    route.forward.src_mac = {2, 0, 0, 0, 0, 1};
    route.forward.dst_mac = {2, 0, 0, 0, 0, 2};
    route.forward.src_ip = {10, 0, 0, 1};
    route.forward.dst_ip = {10, 0, 0, 2};
    route.backward.src_mac = route.forward.dst_mac;
    route.backward.dst_mac = route.forward.src_mac;
    route.backward.src_ip = route.forward.dst_ip;
    route.backward.dst_ip = route.forward.src_ip;
    directory.add(0, route);
  }

  static Packet data_packet(bool ce) {
    Packet p;
    p.opcode = opcode::kWriteMiddle;
    p.dest_qpn = 0x202;
    p.psn = 17;
    p.payload_bytes = 1024;
    p.ecn = ce ? ecn::kCe : ecn::kEct0;
    return p;
  }

  // Every frame of the ring, parsed.
  std::vector<std::pair<frame::FrameStatus, frame::ParsedFrame>> parsed() {
    std::vector<std::pair<frame::FrameStatus, frame::ParsedFrame>> out;
    frame::FrameReader reader(payload);
    ring.drain([&](const CapturedFrame& f) {
      frame::ParsedFrame frame;
      const frame::FrameStatus status = reader.parse(f.bytes, f.captured, frame);
      out.emplace_back(status, frame);
    });
    return out;
  }

  frame::PayloadPattern payload{1024, 1024};
  WireRoute route;
  WireDirectory directory;
  std::array<uint8_t, 6> own_mac{2, 0, 0, 0, 0, 1};
  std::array<uint8_t, 6> peer_mac{2, 0, 0x5e, 0, 0, 7};  // the switch port at the cable's far end
  FrameCaptureRing ring{64, 2048};
  CaptureWriter writer{{}};
};

TEST_F(TwinCapturePointTest, CapturesBothWaysOnlyWhileTheWriterCaptures) {
  TwinCapturePoint port(directory, payload, ring, writer, own_mac, peer_mac);
  port.departs(data_packet(false), 5);  // not capturing yet
  EXPECT_TRUE(parsed().empty());

  writer.start(0);
  port.departs(data_packet(false), 10);
  Packet cnp;
  cnp.opcode = opcode::kCnp;
  cnp.dest_qpn = 0x101;
  cnp.bth_flags = bth_flag::kBecn;
  port.arrives(data_packet(true), 20);
  port.arrives(cnp, 30);
  port.departs(pfc_frame(0, 0, 3, 0xFFFF), 40);
  port.arrives(pfc_frame(0, 0, 5, 0), 45);
  Packet unknown = data_packet(false);
  unknown.dest_qpn = 0x999;
  port.departs(unknown, 50);
  EXPECT_EQ(port.unaddressed(), 1u);

  const auto frames = parsed();
  writer.stop();
  ASSERT_EQ(frames.size(), 5u);
  EXPECT_EQ(frames[0].first, frame::FrameStatus::kRoce);
  EXPECT_EQ(frames[0].second.packet.psn, 17u);
  EXPECT_EQ(frames[0].second.packet.payload_bytes, 1024u);
  EXPECT_EQ(frames[0].second.addresses, route.forward);
  EXPECT_EQ(frames[1].first, frame::FrameStatus::kRoce);
  EXPECT_EQ(frames[1].second.packet.ecn, ecn::kCe);
  EXPECT_EQ(frames[2].first, frame::FrameStatus::kRoce);
  EXPECT_EQ(frames[2].second.packet.opcode, opcode::kCnp);
  EXPECT_EQ(frames[2].second.addresses, route.backward);
  EXPECT_EQ(frames[3].first, frame::FrameStatus::kPfc);
  EXPECT_EQ(frames[3].second.packet.pfc_priority, 3);
  EXPECT_EQ(frames[3].second.addresses.src_mac, own_mac);
  EXPECT_EQ(frames[4].first, frame::FrameStatus::kPfc);
  EXPECT_EQ(frames[4].second.packet.pfc_priority, 5);
  EXPECT_EQ(frames[4].second.addresses.src_mac, peer_mac);
}

TEST_F(TwinCapturePointTest, APacketTheTwinCorruptedFailsItsIcrcInTheCapture) {
  TwinCapturePoint port(directory, payload, ring, writer, own_mac, peer_mac);
  writer.start(0);
  Packet damaged = data_packet(false);
  damaged.icrc_bad = true;
  port.arrives(damaged, 1);
  const auto frames = parsed();
  writer.stop();
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].first, frame::FrameStatus::kBadIcrc);
}

}  // namespace
}  // namespace etwire::nic::capture
