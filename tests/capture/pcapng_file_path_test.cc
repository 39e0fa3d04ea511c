// Where a capture file goes, the rule of results files holds: a symbolic link planted there is
// replaced, never written through, and what it points to is left alone. Capture files are their
// owner's alone (0600), created anew, whatever the umask lets through.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "nic/capture/pcapng_file.h"
#include "tests/testing/test_paths.h"

namespace etwire::nic::capture {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// The umask for a test's lifetime, then the one it found.
class WithUmask {
 public:
  explicit WithUmask(mode_t mask) : previous_(::umask(mask)) {}
  ~WithUmask() { ::umask(previous_); }
  WithUmask(const WithUmask&) = delete;
  WithUmask& operator=(const WithUmask&) = delete;

 private:
  mode_t previous_;
};

// A whole capture with no frame: the header libwiretap wrote and the statistics block.
void write_empty_capture(const fs::path& path) {
  PcapngFile file(path.string(), "p0", 64);
  ASSERT_TRUE(file.close({})) << file.error();
  EXPECT_EQ(fs::file_size(path), file.header_bytes() + PcapngFile::kStatisticsBytes);
}

TEST(PcapngFilePath, ALinkWhereTheCaptureGoesIsReplacedAndItsTargetLeftAlone) {
  const fs::path dir = etwire::testing::make_scratch_dir("capture-link");
  const fs::path target = dir / "elsewhere.txt";
  std::ofstream(target) << "not a capture";
  const fs::path link = dir / "p0.pcapng";
  fs::create_symlink(target, link);
  write_empty_capture(link);
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_regular_file(link));
  EXPECT_EQ(slurp(target), "not a capture");

  // A link to nothing is replaced too: the write does not create its target.
  const fs::path dangling = dir / "p1.pcapng";
  fs::create_symlink(dir / "created-elsewhere", dangling);
  write_empty_capture(dangling);
  EXPECT_FALSE(fs::is_symlink(dangling));
  EXPECT_FALSE(fs::exists(dir / "created-elsewhere"));
}

TEST(PcapngFilePath, CreatedForItsOwnerOnlyUnderUmaskZero) {
  const fs::path dir = etwire::testing::make_scratch_dir("capture-mode");
  const WithUmask umask(0);
  const fs::path path = dir / "p0.pcapng";
  write_empty_capture(path);
  EXPECT_EQ(mode_of(path), mode_t{0600});

  // An earlier run's file is replaced by a new one, whose mode is not the earlier one's.
  fs::permissions(path, fs::perms(0644));
  write_empty_capture(path);
  EXPECT_EQ(mode_of(path), mode_t{0600});
}

}  // namespace
}  // namespace etwire::nic::capture
