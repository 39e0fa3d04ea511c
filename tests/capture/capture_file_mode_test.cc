// Capture files are their owner's alone (issue 39, N27): created 0600 whatever the umask, since
// emulator processes an MPI launcher starts on another host take that host's login umask. A link
// or an earlier file where a capture goes is replaced, never written through.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "nic/capture/pcapng_file.h"
#include "tests/testing/test_paths.h"

namespace etwire::nic::capture {
namespace {

namespace fs = std::filesystem;

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// Sets the umask for the test's lifetime and restores the one it found.
class WithUmask {
 public:
  explicit WithUmask(mode_t mask) : previous_(::umask(mask)) {}
  ~WithUmask() { ::umask(previous_); }
  WithUmask(const WithUmask&) = delete;
  WithUmask& operator=(const WithUmask&) = delete;

 private:
  mode_t previous_;
};

TEST(CaptureFileMode, CreatedForItsOwnerOnlyUnderAPermissiveUmask) {
  const fs::path dir = etwire::testing::make_scratch_dir("capture-mode");
  for (const mode_t mask : {mode_t{0}, mode_t{022}, mode_t{077}}) {
    SCOPED_TRACE(mask);
    const WithUmask umask(mask);
    const fs::path path = dir / "p0.pcapng";
    PcapngFile(path.string(), "p0", 64).close({});
    EXPECT_EQ(mode_of(path), mode_t{0600});
  }
}

TEST(CaptureFileMode, AnEarlierFileOrALinkIsReplaced) {
  const fs::path dir = etwire::testing::make_scratch_dir("capture-mode");
  const WithUmask umask(0);
  const fs::path earlier = dir / "earlier.pcapng";
  std::ofstream(earlier) << "earlier run";
  fs::permissions(earlier, fs::perms(0644));
  PcapngFile(earlier.string(), "p0", 64).close({});
  EXPECT_EQ(mode_of(earlier), mode_t{0600});

  const fs::path target = dir / "elsewhere.txt";
  std::ofstream(target) << "not a capture";
  const fs::path link = dir / "link.pcapng";
  fs::create_symlink(target, link);
  PcapngFile(link.string(), "p0", 64).close({});
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_EQ(mode_of(link), mode_t{0600});
  std::ifstream in(target);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "not a capture");
}

}  // namespace
}  // namespace etwire::nic::capture
