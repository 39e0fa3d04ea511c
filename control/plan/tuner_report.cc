#include "control/plan/tuner_report.h"

#include <fmt/format.h>

#include <vector>

#include "common/text_table.h"
#include "common/units.h"
#include "config/enum_names.h"
#include "config/protocol.h"
#include "control/check/trace_facts.h"

namespace etwire::control {

namespace {

// How collectives go out: the protocol's messages and the buffer that bounds them in flight.
std::string protocol_line(const config::CollectivesConfig& c, config::Protocol protocol) {
  const config::ProtocolConfig& p = c.protocol;
  const config::ProtocolLine line = config::protocol_line(protocol);
  const std::string lines = line.bytes == line.data
                                ? std::string("the data as it is")
                                : fmt::format("{} bytes per {} of data", line.bytes, line.data);
  return fmt::format(
      "{}: messages of {} on the wire ({} of data), split over {} QP(s) per connection, at most "
      "{} in flight per connection ({} full messages); on the wire {}\n",
      config::name_of(config::protocol_names(), protocol),
      format_bytes(p.message_wire_bytes(protocol)), format_bytes(p.message_data_bytes(protocol)),
      c.qps_per_peer, format_bytes(p.buffer(protocol)), p.window(protocol), lines);
}

std::string time_or_dash(double us) {
  return us < 0 ? std::string("-") : fmt::format("{:.1f}", us);
}

// Each algorithm NCCL weighs, a column of the table and a key of the JSON.
constexpr collectives::Algorithm kTunedAlgorithms[] = {
    collectives::Algorithm::kTree, collectives::Algorithm::kRing, collectives::Algorithm::kNvls,
    collectives::Algorithm::kNvlsTree, collectives::Algorithm::kPat};

}  // namespace

std::string protocol_lines(const RunPlan& loaded, const TrafficPlan& plan) {
  const config::CollectivesConfig& c = loaded.config.collectives;
  if (!c.protocol.automatic) return "Protocol " + protocol_line(c, c.protocol.protocol);
  std::string text =
      "\nProtocol auto (per collective, the smallest time of the tuner's model in microseconds; "
      "send/recv runs Simple):\n";
  TextTable table({"job", "collective", "group", "ranks", "size", "algorithm", "LL us", "LL128 us",
                   "Simple us", "protocol"});
  uint32_t used = 0;
  for (const TunerPick& pick : plan.tuner_choices) {
    const auto& t = pick.choice.protocol.time_us;
    used |= 1u << static_cast<uint32_t>(pick.choice.protocol.protocol);
    table.add_row(
        {loaded.config.workload.jobs[pick.job].name,
         std::string(trace::collective_type_name(pick.type)), group_label(pick.group),
         std::to_string(pick.ranks), format_bytes(pick.bytes),
         std::string(collectives::algorithm_name(pick.algorithm)),
         time_or_dash(t[static_cast<size_t>(config::Protocol::kLl)]),
         time_or_dash(t[static_cast<size_t>(config::Protocol::kLl128)]),
         time_or_dash(t[static_cast<size_t>(config::Protocol::kSimple)]),
         std::string(config::name_of(config::protocol_names(), pick.choice.protocol.protocol))});
  }
  text += table.render();
  for (int p = 0; p < config::kProtocolCount; ++p) {
    if ((used >> p) & 1u) text += protocol_line(c, static_cast<config::Protocol>(p));
  }
  return text;
}

nlohmann::ordered_json protocol_json(const RunPlan& loaded, const TrafficPlan& plan) {
  const config::ProtocolConfig& protocol = loaded.config.collectives.protocol;
  const auto shape = [&](config::Protocol p) {
    return nlohmann::ordered_json{{"name", config::name_of(config::protocol_names(), p)},
                                  {"message_wire_bytes", protocol.message_wire_bytes(p)},
                                  {"message_data_bytes", protocol.message_data_bytes(p)},
                                  {"buffer_bytes", protocol.buffer(p)},
                                  {"window_messages", protocol.window(p)}};
  };
  if (!protocol.automatic) return shape(protocol.protocol);
  nlohmann::ordered_json j;
  j["name"] = "auto";
  nlohmann::ordered_json choices = nlohmann::ordered_json::array();
  for (const TunerPick& pick : plan.tuner_choices) {
    nlohmann::ordered_json times;
    for (int p = 0; p < config::kProtocolCount; ++p) {
      const double us = pick.choice.protocol.time_us[static_cast<size_t>(p)];
      times[std::string(
          config::name_of(config::protocol_names(), static_cast<config::Protocol>(p)))] =
          us < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(us);
    }
    choices.push_back({{"job", loaded.config.workload.jobs[pick.job].name},
                       {"collective", trace::collective_type_name(pick.type)},
                       {"group", group_label(pick.group)},
                       {"ranks", pick.ranks},
                       {"bytes", pick.bytes},
                       {"algorithm", collectives::algorithm_name(pick.algorithm)},
                       {"model_us", std::move(times)},
                       {"protocol", shape(pick.choice.protocol.protocol)}});
  }
  j["choices"] = std::move(choices);
  return j;
}

std::string algorithm_lines(const RunPlan& loaded, const TrafficPlan& plan) {
  if (!loaded.config.collectives.any_algorithm_tuned()) return "";
  std::vector<std::string> header{"job", "collective", "group", "ranks", "size"};
  for (const collectives::Algorithm a : kTunedAlgorithms) {
    header.push_back(fmt::format("{} us", collectives::algorithm_name(a)));
  }
  header.insert(header.end(), {"algorithm", "protocol"});
  TextTable table(header);
  for (const TunerPick& pick : plan.tuner_choices) {
    if (!pick.choice.algorithm_tuned) continue;
    std::vector<std::string> row{loaded.config.workload.jobs[pick.job].name,
                                 std::string(trace::collective_type_name(pick.type)),
                                 group_label(pick.group), std::to_string(pick.ranks),
                                 format_bytes(pick.bytes)};
    for (const collectives::Algorithm a : kTunedAlgorithms) {
      row.push_back(time_or_dash(pick.choice.algorithm_time_us[static_cast<size_t>(a)]));
    }
    row.emplace_back(collectives::algorithm_name(pick.algorithm));
    row.emplace_back(config::name_of(config::protocol_names(), pick.choice.protocol.protocol));
    table.add_row(std::move(row));
  }
  return "\nAlgorithm auto (per collective, the smallest time of the tuner's model in microseconds "
         "over the protocols each algorithm may run; - where NCCL would not run it):\n" +
         table.render();
}

nlohmann::ordered_json algorithm_choices_json(const RunPlan& loaded, const TrafficPlan& plan) {
  nlohmann::ordered_json choices = nlohmann::ordered_json::array();
  for (const TunerPick& pick : plan.tuner_choices) {
    if (!pick.choice.algorithm_tuned) continue;
    nlohmann::ordered_json times;
    for (const collectives::Algorithm a : kTunedAlgorithms) {
      const double us = pick.choice.algorithm_time_us[static_cast<size_t>(a)];
      times[std::string(collectives::algorithm_name(a))] =
          us < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(us);
    }
    choices.push_back(
        {{"job", loaded.config.workload.jobs[pick.job].name},
         {"collective", trace::collective_type_name(pick.type)},
         {"group", group_label(pick.group)},
         {"ranks", pick.ranks},
         {"bytes", pick.bytes},
         {"model_us", std::move(times)},
         {"algorithm", collectives::algorithm_name(pick.algorithm)},
         {"protocol", config::name_of(config::protocol_names(), pick.choice.protocol.protocol)}});
  }
  return choices;
}

}  // namespace etwire::control
