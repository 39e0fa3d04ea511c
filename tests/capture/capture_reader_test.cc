// Reading a capture file back (nic/capture/capture_reader.h): frames in file order with their
// stamps, directions and bytes, the file's own count of frames it lacks, and errors that name the
// file and the frame.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "nic/capture/capture_reader.h"
#include "nic/capture/pcapng_file.h"
#include "tests/testing/test_paths.h"

namespace etwire::nic::capture {
namespace {

namespace fs = std::filesystem;

constexpr clock::Nanos kEpoch = 1'800'000'000'000'000'000;

struct Written {
  clock::Nanos stamp;
  Direction direction;
  std::vector<uint8_t> bytes;
};

fs::path write_capture(const std::string& name, const std::vector<Written>& frames,
                       uint32_t snap_length = 0, InterfaceStatistics statistics = {}) {
  const fs::path path = etwire::testing::make_scratch_dir("capture-reader") / name;
  PcapngFile file(path.string(), "p0", snap_length);
  for (const Written& w : frames) {
    CapturedFrame frame;
    frame.time = w.stamp;
    frame.length = static_cast<uint32_t>(w.bytes.size());
    frame.captured =
        snap_length == 0 ? frame.length : std::min<uint32_t>(frame.length, snap_length);
    frame.direction = w.direction;
    frame.bytes = w.bytes.data();
    EXPECT_TRUE(file.write(w.stamp, frame));
  }
  EXPECT_TRUE(file.close(statistics));
  return path;
}

std::vector<uint8_t> ramp(size_t n, uint8_t first) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(first + i);
  return bytes;
}

TEST(CaptureReader, ReadsFramesBackWithStampsDirectionsAndBytes) {
  const std::vector<Written> frames{{kEpoch + 5, Direction::kTransmit, ramp(60, 0)},
                                    {kEpoch + 1'000'000'007, Direction::kReceive, ramp(1500, 9)},
                                    {kEpoch + 1'000'000'008, Direction::kTransmit, ramp(64, 3)}};
  InterfaceStatistics statistics;
  statistics.received = 5;
  statistics.delivered = 3;
  statistics.dropped = 2;
  CaptureReader reader(write_capture("three.pcapng", frames, 0, statistics).string());
  CaptureRecord record;
  for (size_t i = 0; i < frames.size(); ++i) {
    ASSERT_TRUE(reader.next(record)) << i;
    EXPECT_EQ(record.number, i + 1);
    EXPECT_EQ(record.stamp, frames[i].stamp);
    ASSERT_TRUE(record.direction.has_value());
    EXPECT_EQ(*record.direction, frames[i].direction);
    EXPECT_EQ(record.wire_length, frames[i].bytes.size());
    EXPECT_EQ(std::vector<uint8_t>(record.frame.begin(), record.frame.end()), frames[i].bytes);
    EXPECT_FALSE(reader.statistics().has_value());  // known at the end only
  }
  EXPECT_FALSE(reader.next(record));
  ASSERT_TRUE(reader.statistics().has_value());
  EXPECT_EQ(reader.statistics()->received, 5u);
  EXPECT_EQ(reader.statistics()->delivered, 3u);
}

TEST(CaptureReader, AFrameCutBySnapLengthKeepsItsLengthOnTheWire) {
  CaptureReader reader(
      write_capture("cut.pcapng", {{kEpoch, Direction::kTransmit, ramp(1000, 0)}}, 128).string());
  CaptureRecord record;
  ASSERT_TRUE(reader.next(record));
  EXPECT_EQ(record.frame.size(), 128u);
  EXPECT_EQ(record.wire_length, 1000u);
}

TEST(CaptureReader, AFileCutShortNamesTheFrameAfterTheLastGoodOne) {
  const fs::path path =
      write_capture("short.pcapng", {{kEpoch, Direction::kTransmit, ramp(200, 0)},
                                     {kEpoch + 1, Direction::kTransmit, ramp(200, 0)}});
  // Cut in the middle of the second frame's block (the statistics block follows it).
  fs::resize_file(path, fs::file_size(path) - PcapngFile::kStatisticsBytes - 100);
  CaptureReader reader(path.string());
  CaptureRecord record;
  ASSERT_TRUE(reader.next(record));
  try {
    reader.next(record);
    FAIL() << "a cut file read to its end";
  } catch (const CaptureReadError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ": frame 2: "), std::string::npos)
        << e.what();
  }
}

TEST(CaptureReader, AStampBeyondWhatNanosecondsHoldIsRefusedWithItsFrame) {
  const fs::path path = write_capture("late.pcapng", {{kEpoch, Direction::kTransmit, ramp(60, 0)}});
  // The packet block's stamp (its high word follows the block type, length and interface) set to
  // nanoseconds of about the year 2520.
  std::vector<char> bytes(fs::file_size(path));
  std::ifstream(path, std::ios::binary)
      .read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const char kPacketBlock[] = {6, 0, 0, 0};
  const auto block = std::search(bytes.begin(), bytes.end(), kPacketBlock, kPacketBlock + 4);
  ASSERT_NE(block, bytes.end());
  const uint32_t high = 0xF0000000;
  std::memcpy(&*(block + 12), &high, sizeof high);
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  CaptureReader reader(path.string());
  CaptureRecord record;
  try {
    reader.next(record);
    FAIL() << "a stamp past 2262 read";
  } catch (const CaptureReadError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ": frame 1: its time stamp ("),
              std::string::npos)
        << e.what();
  }
}

TEST(CaptureReader, AFileThatIsNoCaptureIsRefusedByName) {
  const fs::path path = etwire::testing::make_scratch_dir("capture-reader") / "notes.txt";
  std::ofstream(path) << "not a capture file at all\n";
  try {
    CaptureReader reader(path.string());
    FAIL() << "a text file opened as a capture";
  } catch (const CaptureReadError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ": ", 0), 0u) << e.what();
  }
  EXPECT_THROW(CaptureReader((path.parent_path() / "missing.pcapng").string()), CaptureReadError);
}

}  // namespace
}  // namespace etwire::nic::capture
