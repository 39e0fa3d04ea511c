// The capture path below the data planes: the ring's slots, the writer's pcapng files as a reader
// written here from the format's specification reads them back (the interface, timestamps,
// lengths, directions, bytes, the statistics block each file ends with, and every block's size
// against the writer's byte count), frames lost to a full ring, its limits, a full disk, and the
// CPUs its thread runs on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cpu_set.h"
#include "nic/capture/capture_writer.h"
#include "nic/capture/frame_capture_ring.h"
#include "nic/capture/pcapng_file.h"

namespace etwire::nic::capture {
namespace {

// pcapng's packet flags: the direction in the two lowest bits.
constexpr uint32_t kInbound = 1;
constexpr uint32_t kOutbound = 2;

struct ReadFrame {
  int64_t stamp_ns;
  uint32_t length;
  std::vector<uint8_t> bytes;
  uint32_t direction;
  uint32_t block_bytes;  // the enhanced packet block's whole size
};

// An interface statistics block and the options the writer puts in it.
struct ReadStatistics {
  uint32_t interface = ~0u;
  uint64_t stamp_ns = 0;
  uint64_t start_ns = 0, end_ns = 0;                  // isb_starttime, isb_endtime
  uint64_t received = 0, dropped = 0, delivered = 0;  // isb_ifrecv, isb_ifdrop, isb_usrdeliv
  uint32_t block_bytes = 0;
};

struct ReadFile {
  std::string application;
  std::string interface_name;
  uint16_t link_type = 0;
  uint32_t snap_length = 0;
  uint8_t timestamp_resolution = 6;  // the format's default: microseconds
  uint64_t header_bytes = 0;         // the blocks before the first frame
  std::vector<ReadFrame> frames;
  std::vector<ReadStatistics> statistics;
};

// A little-endian pcapng file of one section and one interface, as the writer makes it on this
// machine; anything else fails the test that reads it.
class PcapngReader {
 public:
  explicit PcapngReader(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open");
    data_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  ReadFile read() {
    ReadFile file;
    size_t at = 0;
    while (at < data_.size()) {
      const uint32_t type = u32(at);
      const uint32_t length = u32(at + 4);
      if (length < 12 || length % 4 != 0 || at + length > data_.size() ||
          u32(at + length - 4) != length) {
        throw std::runtime_error("block at " + std::to_string(at) + ": bad length");
      }
      const size_t body = at + 8;
      const size_t end = at + length - 4;
      switch (type) {
        case 0x0A0D0D0A:  // section header
          EXPECT_EQ(u32(body), 0x1A2B3C4Du);
          EXPECT_EQ(u16(body + 4), 1u);
          EXPECT_EQ(u16(body + 6), 0u);
          options(body + 16, end, [&](uint16_t code, size_t value, uint16_t size) {
            if (code == 4) file.application = text(value, size);
          });
          file.header_bytes += length;
          break;
        case 0x00000001:  // interface description
          file.link_type = u16(body);
          file.snap_length = u32(body + 4);
          options(body + 8, end, [&](uint16_t code, size_t value, uint16_t size) {
            if (code == 2) file.interface_name = text(value, size);
            if (code == 9) file.timestamp_resolution = data_[value];
          });
          file.header_bytes += length;
          break;
        case 0x00000006: {  // enhanced packet
          EXPECT_TRUE(file.statistics.empty()) << "a frame after the statistics";
          EXPECT_EQ(u32(body), 0u) << "interface id";
          const uint64_t stamp = (uint64_t{u32(body + 4)} << 32) | u32(body + 8);
          const uint32_t captured = u32(body + 12);
          ReadFrame frame{static_cast<int64_t>(stamp), u32(body + 16),
                          std::vector<uint8_t>(&data_[body + 20], &data_[body + 20] + captured), 0,
                          length};
          options(body + 20 + ((captured + 3) & ~3u), end,
                  [&](uint16_t code, size_t value, uint16_t) {
                    if (code == 2) frame.direction = u32(value) & 3;
                  });
          file.frames.push_back(std::move(frame));
          break;
        }
        case 0x00000005: {  // interface statistics
          EXPECT_TRUE(file.statistics.empty()) << "a second statistics block";
          ReadStatistics s;
          s.interface = u32(body);
          s.stamp_ns = stamp(body + 4);
          s.block_bytes = length;
          options(body + 12, end, [&](uint16_t code, size_t value, uint16_t size) {
            EXPECT_EQ(size, 8u) << "option " << code;
            if (code == 2) s.start_ns = stamp(value);
            if (code == 3) s.end_ns = stamp(value);
            if (code == 4) s.received = u64(value);
            if (code == 5) s.dropped = u64(value);
            if (code == 8) s.delivered = u64(value);
          });
          file.statistics.push_back(s);
          break;
        }
        default:
          ADD_FAILURE() << "unexpected block type " << type;
      }
      at += length;
    }
    return file;
  }

 private:
  uint16_t u16(size_t at) const {
    uint16_t v;
    std::memcpy(&v, &data_[at], 2);
    return v;
  }
  uint32_t u32(size_t at) const {
    uint32_t v;
    std::memcpy(&v, &data_[at], 4);
    return v;
  }
  uint64_t u64(size_t at) const {
    uint64_t v;
    std::memcpy(&v, &data_[at], 8);
    return v;
  }
  // A timestamp as enhanced packet blocks hold it: the high 32 bits first.
  uint64_t stamp(size_t at) const { return (uint64_t{u32(at)} << 32) | u32(at + 4); }
  std::string text(size_t at, uint16_t size) const {
    return std::string(reinterpret_cast<const char*>(&data_[at]), size);
  }
  // Each option up to the end of options, which must come last.
  template <typename Visit>
  void options(size_t at, size_t end, Visit&& visit) const {
    while (at + 4 <= end) {
      const uint16_t code = u16(at);
      const uint16_t size = u16(at + 2);
      if (code == 0) {
        EXPECT_EQ(at + 4, end) << "options after the end of options";
        return;
      }
      visit(code, at + 4, size);
      at += 4 + ((size + 3u) & ~3u);
    }
    EXPECT_EQ(at, end) << "no end of options";
  }

  std::vector<uint8_t> data_;
};

ReadFile read_pcapng(const std::string& path) {
  return PcapngReader(path).read();
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

TEST(FrameCaptureRing, SlotsFollowTheSnapLengthWithinTheBudget) {
  constexpr uint64_t kBudget = FrameCaptureRing::kWallClockBytes;
  // Whole frames of the default PMTU keep the 8192 slots a ring had before; headers only, the
  // most a ring has.
  EXPECT_EQ(FrameCaptureRing::slots_within(kBudget, 4227), 8192u);
  EXPECT_EQ(FrameCaptureRing::slots_within(kBudget, 128), FrameCaptureRing::kMaxSlots);
  // Any snap length: a power of two within the budget, twice which would not fit unless capped,
  // and never more slots for longer frames.
  uint32_t previous = FrameCaptureRing::kMaxSlots;
  for (uint32_t snap = 60; snap <= 65535; snap += 61) {
    SCOPED_TRACE(snap);
    const uint32_t slots = FrameCaptureRing::slots_within(kBudget, snap);
    EXPECT_EQ(slots & (slots - 1), 0u);
    EXPECT_LE(slots * FrameCaptureRing::slot_bytes(snap), kBudget);
    if (slots < FrameCaptureRing::kMaxSlots) {
      EXPECT_GT(2 * slots * FrameCaptureRing::slot_bytes(snap), kBudget);
    }
    EXPECT_LE(slots, previous);
    previous = slots;
  }
  // A budget too small for the fewest slots still gets them, unless the cap is lower.
  EXPECT_EQ(FrameCaptureRing::slots_within(1024, 1500), FrameCaptureRing::kMinSlots);
  EXPECT_EQ(FrameCaptureRing::slots_within(1024, 1500, 16), 16u);
  EXPECT_EQ(FrameCaptureRing::slots_within(uint64_t{4} << 20, 4227, 512), 512u);
  EXPECT_EQ(FrameCaptureRing::slots_within(uint64_t{4} << 20, 9018, 512), 256u);
  const FrameCaptureRing ring(FrameCaptureRing::slots_within(uint64_t{1} << 20, 128), 128);
  EXPECT_EQ(ring.slots(), 4096u);
}

TEST(CaptureWriter, WritesEveryRingOfAFileWithTheInterfaceAndEachFramesDirection) {
  FrameCaptureRing a(16, 64), b(16, 64);
  const std::string path = temp_file("two-queues.pcapng");
  CaptureWriter writer({});
  writer.add_file(path, "h3p1", {&a, &b}, 64);
  EXPECT_FALSE(writer.capturing());
  constexpr int64_t kEpoch = 1'700'000'000'123'456'789LL;
  writer.start(kEpoch);
  EXPECT_TRUE(writer.capturing());
  const std::vector<uint8_t> frame = ramp(100);
  ASSERT_TRUE(a.try_push(1'000'000'001, Direction::kTransmit, frame.data(), 100, 100));
  ASSERT_TRUE(b.try_push(7, Direction::kReceive, frame.data(), 60, 60));
  writer.stop();
  EXPECT_FALSE(writer.capturing());
  const ReadFile file = read_pcapng(path);
  EXPECT_EQ(file.application, "etwire");
  EXPECT_EQ(file.interface_name, "h3p1");
  EXPECT_EQ(file.link_type, 1u);  // Ethernet
  EXPECT_EQ(file.snap_length, 64u);
  EXPECT_EQ(file.timestamp_resolution, 9u);
  ASSERT_EQ(file.frames.size(), 2u);
  EXPECT_EQ(file.frames[0].stamp_ns, kEpoch + 1'000'000'001);
  EXPECT_EQ(file.frames[0].length, 100u);
  EXPECT_EQ(file.frames[0].bytes, ramp(64));
  EXPECT_EQ(file.frames[0].direction, kOutbound);
  EXPECT_EQ(file.frames[1].stamp_ns, kEpoch + 7);
  EXPECT_EQ(file.frames[1].length, 60u);
  EXPECT_EQ(file.frames[1].bytes, ramp(60));
  EXPECT_EQ(file.frames[1].direction, kInbound);
  const CaptureTotals& totals = writer.totals();
  EXPECT_EQ(totals.frames, 2u);
  EXPECT_EQ(totals.bytes, std::filesystem::file_size(path));
  ASSERT_EQ(totals.files.size(), 1u);
  EXPECT_EQ(totals.files[0].path, path);
  EXPECT_EQ(totals.files[0].frames, 2u);
  EXPECT_EQ(totals.files[0].bytes, totals.bytes);
  EXPECT_FALSE(totals.limit_reached);
  EXPECT_EQ(totals.error, "");
}

// The writer's limits count bytes before writing them: its count of each block must be the
// file's.
TEST(CaptureWriter, CountsEveryByteOfItsFiles) {
  FrameCaptureRing ring(64, 128), other(64, 128);
  const std::string path = temp_file("sizes.pcapng");
  const std::string other_path = temp_file("sizes-other.pcapng");
  CaptureWriter writer({});
  writer.add_file(path, "p0", {&ring}, 128);
  writer.add_file(other_path, "a-longer-port-name", {&other}, 128);
  writer.start(0);
  const std::vector<uint8_t> frame = ramp(200);
  // Every padding of the frame bytes, both ways, and frames cut at the snap length.
  for (uint32_t n = 60; n < 68; ++n) {
    ASSERT_TRUE(ring.try_push(n, Direction::kTransmit, frame.data(), n, n));
    ASSERT_TRUE(ring.try_push(n, Direction::kReceive, frame.data(), n, n));
  }
  ASSERT_TRUE(ring.try_push(99, Direction::kReceive, frame.data(), 200, 200));
  ASSERT_TRUE(other.try_push(1, Direction::kTransmit, frame.data(), 61, 61));
  writer.stop();
  const ReadFile file = read_pcapng(path);
  ASSERT_EQ(file.frames.size(), 17u);
  uint64_t read_bytes = file.header_bytes;
  for (const ReadFrame& f : file.frames) {
    EXPECT_EQ(f.block_bytes, PcapngFile::record_bytes(static_cast<uint32_t>(f.bytes.size())))
        << f.bytes.size() << " bytes";
    read_bytes += f.block_bytes;
  }
  ASSERT_EQ(file.statistics.size(), 1u);
  EXPECT_EQ(file.statistics[0].block_bytes, PcapngFile::kStatisticsBytes);
  read_bytes += file.statistics[0].block_bytes;
  EXPECT_EQ(file.frames.back().length, 200u);
  EXPECT_EQ(file.frames.back().bytes.size(), 128u);
  const CaptureTotals& totals = writer.totals();
  ASSERT_EQ(totals.files.size(), 2u);
  EXPECT_EQ(read_bytes, std::filesystem::file_size(path));
  EXPECT_EQ(totals.files[0].bytes, std::filesystem::file_size(path));
  EXPECT_EQ(totals.files[1].bytes, std::filesystem::file_size(other_path));
  EXPECT_EQ(read_pcapng(other_path).interface_name, "a-longer-port-name");
  EXPECT_EQ(totals.bytes, totals.files[0].bytes + totals.files[1].bytes);
  EXPECT_EQ(totals.frames, 18u);
}

// A producer that finds its ring full counts the frame on the ring (as a DPDK port does); the
// file it would have gone to says so at its end, and the totals too.
TEST(CaptureWriter, AFullRingCountsItsLostFramesInTheFileAndTheTotals) {
  FrameCaptureRing full(4, 64), fine(4, 64);
  const std::string path = temp_file("lost.pcapng");
  const std::string fine_path = temp_file("not-lost.pcapng");
  CaptureWriter writer({});
  writer.add_file(path, "p0", {&full}, 64);
  writer.add_file(fine_path, "p1", {&fine}, 64);
  const std::vector<uint8_t> frame = ramp(64);
  // The writer has not started draining: the fifth frame on finds no room.
  for (int i = 0; i < 10; ++i) {
    if (!full.try_push(i, Direction::kTransmit, frame.data(), 64, 64)) full.count_lost();
  }
  ASSERT_TRUE(fine.try_push(0, Direction::kReceive, frame.data(), 64, 64));
  EXPECT_EQ(full.lost(), 6u);
  const auto before = std::chrono::system_clock::now().time_since_epoch();
  writer.start(0);
  writer.stop();
  const auto after = std::chrono::system_clock::now().time_since_epoch();

  const ReadFile file = read_pcapng(path);
  EXPECT_EQ(file.frames.size(), 4u);
  ASSERT_EQ(file.statistics.size(), 1u);
  const ReadStatistics& s = file.statistics[0];
  EXPECT_EQ(s.interface, 0u);
  EXPECT_EQ(s.received, 10u);
  EXPECT_EQ(s.dropped, 6u);
  EXPECT_EQ(s.delivered, 4u);
  EXPECT_LE(static_cast<uint64_t>(std::chrono::nanoseconds(before).count()), s.start_ns);
  EXPECT_LE(s.start_ns, s.end_ns);
  EXPECT_LE(s.end_ns, static_cast<uint64_t>(std::chrono::nanoseconds(after).count()));
  EXPECT_EQ(s.stamp_ns, s.end_ns);

  const ReadFile fine_file = read_pcapng(fine_path);
  ASSERT_EQ(fine_file.statistics.size(), 1u);
  EXPECT_EQ(fine_file.statistics[0].received, 1u);
  EXPECT_EQ(fine_file.statistics[0].dropped, 0u);
  EXPECT_EQ(fine_file.statistics[0].delivered, 1u);

  const CaptureTotals& totals = writer.totals();
  EXPECT_EQ(totals.frames, 5u);
  EXPECT_EQ(totals.frames_lost, 6u);
  ASSERT_EQ(totals.files.size(), 2u);
  EXPECT_EQ(totals.files[0].lost, 6u);
  EXPECT_EQ(totals.files[1].lost, 0u);
  EXPECT_EQ(totals.files[0].bytes, std::filesystem::file_size(path));
  EXPECT_EQ(totals.error, "");
}

TEST(CaptureWriter, StopsAtTheFrameLimitAndSaysSo) {
  FrameCaptureRing ring(16, 64);
  const std::string path = temp_file("frame-limit.pcapng");
  CaptureWriter writer({0, 3});
  writer.add_file(path, "p0", {&ring}, 64);
  writer.start(0);
  const std::vector<uint8_t> frame = ramp(64);
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(ring.try_push(i, Direction::kTransmit, frame.data(), 64, 64));
  writer.stop();
  const ReadFile file = read_pcapng(path);
  EXPECT_EQ(file.frames.size(), 3u);
  ASSERT_EQ(file.statistics.size(), 1u);
  EXPECT_EQ(file.statistics[0].received, 5u);
  EXPECT_EQ(file.statistics[0].dropped, 0u);
  EXPECT_EQ(file.statistics[0].delivered, 3u);
  EXPECT_TRUE(writer.totals().limit_reached);
  EXPECT_EQ(writer.totals().frames_over_limit, 2u);
  EXPECT_EQ(writer.totals().bytes, std::filesystem::file_size(path));
  EXPECT_FALSE(writer.capturing());
}

TEST(CaptureWriter, StopsAtTheByteLimitWithTheFileWithinIt) {
  // The size of a file's header: a file of no frames.
  const std::string empty = temp_file("empty.pcapng");
  uint64_t header;
  {
    CaptureWriter writer({});
    writer.add_file(empty, "p0", {}, 64);
    writer.stop();
    header = writer.totals().bytes;
  }
  EXPECT_EQ(header, std::filesystem::file_size(empty));
  // The statistics block is counted from the start: a closed file stays within the limit.
  EXPECT_EQ(header, read_pcapng(empty).header_bytes + PcapngFile::kStatisticsBytes);
  FrameCaptureRing ring(16, 64);
  const std::string path = temp_file("byte-limit.pcapng");
  // The header and two frames of 64 bytes fit; a third does not, by one byte.
  const uint64_t record = PcapngFile::record_bytes(64);
  CaptureWriter writer({header + 3 * record - 1, 0});
  writer.add_file(path, "p0", {&ring}, 64);
  writer.start(0);
  const std::vector<uint8_t> frame = ramp(64);
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(ring.try_push(i, Direction::kTransmit, frame.data(), 64, 64));
  writer.stop();
  EXPECT_EQ(read_pcapng(path).frames.size(), 2u);
  EXPECT_EQ(std::filesystem::file_size(path), header + 2 * record);
  EXPECT_EQ(writer.totals().bytes, header + 2 * record);
  EXPECT_TRUE(writer.totals().limit_reached);
  EXPECT_EQ(writer.totals().frames_over_limit, 2u);
}

TEST(CaptureWriter, AFullDiskStopsTheCaptureAndIsReported) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  FrameCaptureRing ring(256, 128);
  CaptureWriter writer({});
  writer.add_file("/dev/full", "p0", {&ring}, 128);
  const std::vector<uint8_t> frame = ramp(128);
  // Far more than the stream's buffer holds, so that writes reach the device.
  for (int i = 0; i < 200; ++i)
    ASSERT_TRUE(ring.try_push(i, Direction::kTransmit, frame.data(), 128, 128));
  writer.start(0);
  writer.stop();
  const CaptureTotals& totals = writer.totals();
  EXPECT_NE(totals.error.find("/dev/full: cannot write: "), std::string::npos) << totals.error;
  EXPECT_NE(totals.error.find(std::strerror(ENOSPC)), std::string::npos) << totals.error;
  EXPECT_LT(totals.frames, 200u);
  EXPECT_FALSE(totals.limit_reached);
  EXPECT_FALSE(writer.capturing());
}

TEST(CaptureWriter, NamesAFileItCannotCreate) {
  FrameCaptureRing ring(4, 64);
  CaptureWriter writer({});
  try {
    writer.add_file("/nonexistent-etwire-dir/x.pcapng", "p0", {&ring}, 64);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-etwire-dir/x.pcapng: cannot create"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(std::strerror(ENOENT)), std::string::npos) << e.what();
  }
}

TEST(CaptureWriter, RunsOnTheCpusItIsGiven) {
  const std::vector<unsigned> mine = calling_thread_cpus();
  if (mine.size() < 2) GTEST_SKIP() << "this process may run on one CPU only";
  FrameCaptureRing ring(4, 64);
  CaptureWriter writer({});
  writer.add_file(temp_file("placed.pcapng"), "p0", {&ring}, 64);
  writer.start(0, {mine.back()});
  EXPECT_EQ(writer.cpus(), std::vector<unsigned>{mine.back()});
  writer.stop();
  // Given none, it runs where its starter does.
  CaptureWriter inherits({});
  inherits.add_file(temp_file("inherited.pcapng"), "p0", {&ring}, 64);
  inherits.start(0);
  EXPECT_EQ(inherits.cpus(), mine);
  inherits.stop();
}

TEST(CaptureWriter, SaysWhenItCannotRunOnTheCpusItIsGiven) {
  FrameCaptureRing ring(4, 64);
  CaptureWriter writer({});
  writer.add_file(temp_file("misplaced.pcapng"), "p0", {&ring}, 64);
  // No machine here has CPU 1000 online.
  try {
    writer.start(0, {1000});
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run on CPUs 1000"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(writer.capturing());
}

}  // namespace
}  // namespace etwire::nic::capture
