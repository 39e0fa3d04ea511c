// fabric.infragraph on hostile files: graphs that are small to write and huge (or deep) to
// expand. Each is refused at its place in the file before the work or the memory it would take,
// never with a crash or an allocation failure. The files are generated here, not kept.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "control/resolve/config_loader.h"
#include "tests/testing/test_paths.h"

namespace etwire::control {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Loads a run of 8 loopback ports whose fabric imports `graph`, written as graph.yaml beside it
// (traces not read: only the fabric's diagnostics matter).
RunPlan load_written(const std::string& graph) {
  const fs::path dir = etwire::testing::make_scratch_dir("infragraph-limits");
  std::ofstream(dir / "graph.yaml") << graph;
  const std::string run =
      "workload:\n  jobs:\n    - trace: " +
      (etwire::testing::source_dir() / "configs/traces/alltoall_8r/alltoall").string() +
      "\nports:\n  - name: p\n    count: 8\n    speed: 100Gbps\nfabric:\n  infragraph: "
      "graph.yaml\n";
  LoadOptions options;
  options.read_traces = false;
  return load_config_text(run, (dir / "run.yaml").string(), dir.string(), options);
}

// The error at `key_path`, in graph.yaml, whose message has `says`; null when there is none.
const Diagnostic* find(const RunPlan& loaded, const std::string& key_path,
                       const std::string& says) {
  for (const Diagnostic& d : loaded.diagnostics.items()) {
    if (d.severity == Severity::kError && d.key_path == key_path &&
        fs::path(d.where.file).filename() == "graph.yaml" &&
        d.message.find(says) != std::string::npos) {
      return &d;
    }
  }
  return nullptr;
}
const Diagnostic* find(const RunPlan&& loaded, const std::string& key_path,
                       const std::string& says) = delete;

// Device i is made of device i + 1, down to the last, which holds a NIC: each device's host-ness
// is that of the device at the bottom of the chain.
std::string composition_chain(size_t depth, const std::string& last_component) {
  std::string text = "devices:\n";
  for (size_t i = 0; i + 1 < depth; ++i) {
    text += "  - {name: d" + std::to_string(i) + ", components: [{name: d" + std::to_string(i + 1) +
            ", choice: device, count: 1}]}\n";
  }
  text += "  - {name: d" + std::to_string(depth - 1) + ", components: [" + last_component + "]}\n";
  return text;
}

TEST(InfraGraphLimits, ADeepChainOfCompositionsIsWalkedWithoutRecursion) {
  // 60,000 devices deep overflowed the stack of the walk that finds hosts (SIGSEGV). Closing the
  // chain into a loop at its bottom shows the walk reached it.
  constexpr size_t kDepth = 60'000;
  const RunPlan looped =
      load_written(composition_chain(kDepth, "{name: d0, choice: device, count: 1}"));
  EXPECT_FALSE(looped.ok());
  const Diagnostic* d = find(looped, "devices[59999].components[0]",
                             "device \"d0\" is composed into itself: component \"d0\" of device "
                             "\"d59999\" closes the loop");
  ASSERT_NE(d, nullptr) << looped.diagnostics.to_text();
  EXPECT_EQ(d->where.line, static_cast<int>(kDepth) + 1);
}

}  // namespace
}  // namespace etwire::control
