// collectives.protocol and its buffers: the lines and slices of each protocol as NCCL sizes them,
// and the keys that set them, refused where they cannot hold a line; auto's picks in the plan.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/enum_names.h"
#include "config/protocol.h"
#include "control/plan/plan_report.h"
#include "control/plan/traffic_plan.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using config::Protocol;
using ::testing::HasSubstr;

TEST(Protocol, LinesPadTheDataToWholeLines) {
  EXPECT_EQ(config::protocol_wire_bytes(Protocol::kSimple, 12345), 12345u);
  EXPECT_EQ(config::protocol_wire_bytes(Protocol::kLl, 8), 16u);
  EXPECT_EQ(config::protocol_wire_bytes(Protocol::kLl, 9), 32u);
  EXPECT_EQ(config::protocol_wire_bytes(Protocol::kLl, 1 << 20), 2u << 20);
  EXPECT_EQ(config::protocol_wire_bytes(Protocol::kLl128, 120), 128u);
  EXPECT_EQ(config::protocol_wire_bytes(Protocol::kLl128, 121), 256u);
  EXPECT_EQ(config::protocol_wire_bytes(Protocol::kLl128, 0), 0u);
}

TEST(Protocol, DefaultSlicesAreNcclsSteps) {
  const config::ProtocolConfig defaults;
  // Simple: two of the eight steps of a 4 MiB buffer per message, four messages in flight.
  EXPECT_EQ(defaults.message_wire_bytes(Protocol::kSimple), 1u << 20);
  EXPECT_EQ(defaults.message_data_bytes(Protocol::kSimple), 1u << 20);
  EXPECT_EQ(defaults.window(Protocol::kSimple), 4u);
  // LL: one step of 512 KiB, half of it data.
  EXPECT_EQ(defaults.message_wire_bytes(Protocol::kLl), 65536u);
  EXPECT_EQ(defaults.message_data_bytes(Protocol::kLl), 32768u);
  EXPECT_EQ(defaults.window(Protocol::kLl), 8u);
  // LL128: one step of 4,915,200 bytes, 120 of each 128 data.
  EXPECT_EQ(defaults.message_wire_bytes(Protocol::kLl128), 614400u);
  EXPECT_EQ(defaults.message_data_bytes(Protocol::kLl128), 576000u);
  EXPECT_EQ(defaults.window(Protocol::kLl128), 8u);
}

std::string with_collectives(const std::string& lines) {
  return std::string(testing::kMinimalConfig) + "collectives:\n" + lines;
}

TEST(ProtocolConfig, KeysSetTheProtocolAndItsBuffers) {
  const RunPlan loaded = testing::load_inline(
      with_collectives("  protocol: LL128\n  slots: 16\n  slice_slots: 4\n"
                       "  buffer_size: 8MiB\n  ll_buffer_size: 1MiB\n  ll128_buffer_size: 9MiB\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const config::ProtocolConfig& protocol = loaded.config.collectives.protocol;
  EXPECT_EQ(protocol.protocol, Protocol::kLl128);
  EXPECT_EQ(protocol.message_wire_bytes(Protocol::kSimple), 2u << 20);
  EXPECT_EQ(protocol.window(Protocol::kSimple), 4u);
  EXPECT_EQ(protocol.message_wire_bytes(Protocol::kLl), 65536u);
  EXPECT_EQ(protocol.buffer(Protocol::kLl128), 9u << 20);
}

// Under auto the plan lists the tuner's pick for each collective: the bundled trace's 1 MiB
// all-reduces on eight single-rank servers take LL128 by the model.
TEST(ProtocolConfig, AutoChoicesArePrintedByThePlan) {
  const RunPlan loaded = testing::load_inline(with_collectives("  protocol: auto\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_TRUE(loaded.config.collectives.protocol.automatic);
  Diagnostics problems;
  const TrafficPlan plan = plan_traffic(loaded, problems);
  ASSERT_EQ(plan.tuner_choices.size(), 1u);
  const TunerPick& pick = plan.tuner_choices[0];
  EXPECT_FALSE(pick.choice.algorithm_tuned);
  EXPECT_EQ(pick.ranks, 8u);
  EXPECT_EQ(pick.bytes, 1u << 20);
  const std::string text = plan_to_text(loaded, plan);
  EXPECT_THAT(text, HasSubstr("Protocol auto (per collective"));
  const collectives::ProtocolChoice& choice = pick.choice.protocol;
  const std::string picked(config::name_of(config::protocol_names(), choice.protocol));
  EXPECT_THAT(text, HasSubstr(picked + ": messages of"));
  const auto json = plan_to_json(loaded, plan);
  EXPECT_EQ(json["protocol"]["name"], "auto");
  EXPECT_EQ(json["protocol"]["choices"][0]["protocol"]["name"], picked);
  // Every protocol is a candidate for the ring all-reduce, and the pick is the fastest.
  for (double us : choice.time_us) {
    EXPECT_GT(us, 0);
    EXPECT_LE(choice.time_us[static_cast<size_t>(choice.protocol)], us);
  }
}

TEST(ProtocolConfig, AnUnknownProtocolListsTheKnownOnes) {
  const RunPlan loaded = testing::load_inline(with_collectives("  protocol: ll64\n"));
  const Diagnostic* error = testing::only_error(loaded);
  ASSERT_NE(error, nullptr);
  EXPECT_THAT(error->message, HasSubstr("ll128"));
}

TEST(ProtocolConfig, BuffersThatCannotHoldALinePerSlotAreRefused) {
  const RunPlan loaded =
      testing::load_inline(with_collectives("  slots: 8\n  ll128_buffer_size: 1KiB\n"));
  const Diagnostic* error = testing::only_error(loaded);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->key_path, "collectives.ll128_buffer_size");
  EXPECT_THAT(error->message, HasSubstr("less than 256 bytes per slot"));
  // Slots alone can cut a default buffer too fine: LL's 512 KiB in 4096 slots of 128 bytes.
  const RunPlan sliced = testing::load_inline(with_collectives("  slots: 4096\n"));
  const Diagnostic* slots = testing::only_error(sliced);
  ASSERT_NE(slots, nullptr);
  EXPECT_EQ(slots->key_path, "collectives.slots");
  EXPECT_THAT(slots->message, HasSubstr("ll's buffer of 524288 bytes"));
}

TEST(ProtocolConfig, ASliceLargerThanTheBufferIsRefused) {
  const RunPlan loaded = testing::load_inline(with_collectives("  slots: 2\n  slice_slots: 4\n"));
  const Diagnostic* error = testing::only_error(loaded);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->key_path, "collectives.slice_slots");
}

TEST(ProtocolConfig, MaxMessageSizeSaysWhatReplacedIt) {
  const RunPlan loaded = testing::load_inline(with_collectives("  max_message_size: 1MiB\n"));
  const Diagnostic* error = testing::only_error(loaded);
  ASSERT_NE(error, nullptr);
  EXPECT_THAT(error->message, HasSubstr("buffer_size"));
  EXPECT_EQ(error->where.line, 8);
}

// `plan` says which protocol runs and counts the wire bytes it puts on each port.
TEST(ProtocolConfig, ThePlanShowsTheProtocolAndItsWireBytes) {
  const auto planned = [](const std::string& protocol) {
    const RunPlan loaded = testing::load_inline(with_collectives("  protocol: " + protocol + "\n"));
    EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
    Diagnostics problems;
    const TrafficPlan plan = plan_traffic(loaded, problems);
    EXPECT_FALSE(problems.has_errors()) << problems.to_text();
    EXPECT_THAT(plan_to_text(loaded, plan), HasSubstr("Protocol " + protocol + ": messages of"));
    const auto json = plan_to_json(loaded, plan);
    EXPECT_EQ(json["protocol"]["name"], protocol);
    return plan.ports[0].bytes_sent;
  };
  const uint64_t simple = planned("simple");
  // The bundled trace's all-reduces move multiples of 8 bytes; LL128's lines leave at most one
  // part-filled line per peer a port sends to (its ring neighbour, once per collective).
  EXPECT_EQ(planned("ll"), 2 * simple);
  const uint64_t ll128 = planned("ll128");
  EXPECT_GE(ll128 * 120, simple * 128);
  EXPECT_LT(ll128 * 120, simple * 128 + 16 * 128 * 120);
}

}  // namespace
}  // namespace etwire::control
