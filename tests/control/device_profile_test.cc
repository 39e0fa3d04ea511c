// Device profiles (control/load/device_profile.h): the `set` list of a profile etwire calibrate
// writes is read in order; a file that is not one, an entry that is not KEY=VALUE, and a key
// outside the twin's model are refused with the file, line and column.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "control/load/device_profile.h"
#include "tests/testing/test_paths.h"

namespace etwire::control {
namespace {

std::string write_profile(const std::string& name, const std::string& text) {
  const std::filesystem::path path = etwire::testing::make_scratch_dir("device-profile") / name;
  std::ofstream(path) << text;
  return path.string();
}

std::string refusal(const std::string& path) {
  try {
    read_device_profile(path);
  } catch (const DeviceProfileError& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceProfile, ReadsTheSetListInOrder) {
  const std::string path = write_profile("ok.yaml",
                                         "# fitted\nfitted_from: [\"lab\"]\nset:\n"
                                         "  - \"fabric.ecn.kmin=11060\"\n"
                                         "  - ports[0].speed=30349207bps\n"
                                         "  - fabric.ecn.average_weight=0.02\n");
  EXPECT_EQ(read_device_profile(path),
            (std::vector<std::string>{"fabric.ecn.kmin=11060", "ports[0].speed=30349207bps",
                                      "fabric.ecn.average_weight=0.02"}));
}

TEST(DeviceProfile, RefusesWhatIsNotAProfileWithItsPlace) {
  const std::string missing =
      (etwire::testing::make_scratch_dir("device-profile") / "none.yaml").string();
  EXPECT_EQ(refusal(missing), missing + ": cannot read the device profile");
  const std::string no_set = write_profile("no-set.yaml", "fabric:\n  ecn: {kmin: 1}\n");
  EXPECT_NE(refusal(no_set).find(no_set + ": not a device profile"), std::string::npos);
  const std::string map = write_profile("map.yaml", "set:\n  kmin: 1\n");
  EXPECT_NE(refusal(map).find(map + ":2:3: `set` must be a list"), std::string::npos)
      << refusal(map);
  const std::string bare = write_profile("bare.yaml", "set:\n  - fabric.ecn.kmin\n");
  EXPECT_EQ(refusal(bare), bare + ":2:5: not a KEY.PATH=VALUE override");
  const std::string other = write_profile("other.yaml",
                                          "set:\n  - fabric.ecn.kmin=1\n"
                                          "  - workload.iterations=3\n");
  EXPECT_NE(refusal(other).find(other + ":3:5: workload.iterations: a device profile sets the "
                                        "twin's model only"),
            std::string::npos)
      << refusal(other);
  const std::string syntax = write_profile("syntax.yaml", "set: [\n");
  EXPECT_EQ(refusal(syntax).rfind(syntax + ":", 0), 0u) << refusal(syntax);
}

TEST(DeviceProfile, MaySetTheTwinsModelOnly) {
  EXPECT_TRUE(profile_may_set("fabric.buffer.queue_packets"));
  EXPECT_TRUE(profile_may_set("ports[12].speed"));
  EXPECT_FALSE(profile_may_set("ports[0].mtu"));
  EXPECT_FALSE(profile_may_set("ports.speed"));
  EXPECT_FALSE(profile_may_set("ports[].speed"));
  EXPECT_FALSE(profile_may_set("ports[x].speed"));
  EXPECT_FALSE(profile_may_set("ports[0].speed.x"));
  EXPECT_FALSE(profile_may_set("transport.pmtu"));
}

}  // namespace
}  // namespace etwire::control
