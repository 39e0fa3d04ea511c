#include "outputs/report/summary_reader.h"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "common/bounded_file.h"
#include "config/enum_names.h"
#include "engine/result_fields.h"
#include "outputs/report/report_input_error.h"
#include "outputs/results_files.h"
#include "outputs/summary_json.h"

namespace etwire::outputs::report {

namespace {

using engine::InSummary;
using Json = nlohmann::json;

// One JSON object of the file, named in every error with the file and where the object is.
class Fields {
 public:
  Fields(const std::string& path, std::string where, const Json& object)
      : path_(path), where_(std::move(where)), object_(object) {
    if (!object_.is_object()) fail("expected an object");
  }

  bool has(std::string_view key) const { return object_.contains(key); }

  // The value of `key`; nullptr when the key is absent or null.
  const Json* find(std::string_view key) const {
    const auto found = object_.find(key);
    if (found == object_.end() || found->is_null()) return nullptr;
    return &*found;
  }

  // Where an object or array under `key` is: "collectives[3]", "iterations[0].ranks[2]".
  std::string inner(std::string_view key) const {
    return where_.empty() ? std::string(key) : fmt::format("{}.{}", where_, key);
  }

  [[noreturn]] void fail(std::string_view what) const {
    throw ReportInputError(
        fmt::format("{}: {}: {}", path_, where_.empty() ? "top level" : where_, what));
  }

  const std::string& path() const { return path_; }

 private:
  const std::string& path_;
  std::string where_;  // empty: the top level
  const Json& object_;
};

// Reads records as summary.json shows them: the entries of their lists (engine/result_fields.h).
// The keys a record's list requires must be there (engine::required_in_summary); another key the
// file leaves out, or holds null, leaves its member as it is. A key of the wrong type is an
// error.
class SummaryJsonReader {
 public:
  // `results`: the run being read, whose jobs name the jobs of the records after them.
  explicit SummaryJsonReader(const engine::RunResults& results) : results_(results) {}

  template <engine::ResultRecord Record>
  void read(const Fields& object, Record& record) const {
    engine::for_each_entry(engine::ResultFields<Record>::list,
                           [&](const auto& entry) { read(object, record, entry); });
  }

 private:
  template <typename Record, typename Member, InSummary Form>
  void read(const Fields& object, Record& record,
            const engine::ResultField<Record, Member, Form>& field) const {
    if constexpr (Form != InSummary::kNo) {
      if (engine::required_in_summary<Record>(field.name) && !object.has(field.name)) {
        object.fail(fmt::format("no \"{}\"", field.name));
      }
      const Json* value = object.find(field.name);
      if (value == nullptr) return;
      Member& member = record.*field.member;
      if constexpr (Form == InSummary::kJobName) {
        member = job_index(object, field.name, *value);
      } else if constexpr (Form == InSummary::kGroupLabel) {
        member = group_key(object, field.name, *value);
      } else {
        read_value(object, field.name, *value, member);
      }
    }
  }
  template <typename Record>
  void read(const Fields&, Record&, const engine::SummaryValue&) const {}
  template <typename Record, typename Entries>
  void read(const Fields& object, Record& record,
            const engine::SummaryObject<Entries>& nested) const {
    const Json* value = object.find(nested.name);
    if (value == nullptr) {
      if (engine::required_in_summary<Record>(nested.name)) {
        object.fail(fmt::format("no \"{}\"", nested.name));
      }
      return;
    }
    const Fields inner(object.path(), object.inner(nested.name), *value);
    engine::for_each_entry(nested.entries, [&](const auto& entry) { read(inner, record, entry); });
  }
  void read(const Fields& object, engine::PortRecord& port,
            const engine::BaseRecord<dataplane::PortCounters>&) const {
    for (size_t f = 0; f < dataplane::kPortCounterFields.size(); ++f) {
      const dataplane::PortCounterField& field = dataplane::kPortCounterFields[f];
      // Null (or left out): the port's device does not count it.
      if (const Json* value = object.find(field.name)) {
        read_value(object, field.name, *value, port.*field.member);
      } else {
        port.absent |= dataplane::port_counter_bit(f);
      }
    }
  }

  static void read_value(const Fields& object, std::string_view key, const Json& value,
                         engine::RunStatus& status) {
    const auto known = engine::run_status_named(text(object, key, value));
    if (!known) object.fail(fmt::format("unknown status {}", json_excerpt(value)));
    status = *known;
  }
  static void read_value(const Fields& object, std::string_view key, const Json& value,
                         collectives::Algorithm& algorithm) {
    const auto known = collectives::parse_algorithm(text(object, key, value));
    if (!known) object.fail(fmt::format("unknown algorithm {}", json_excerpt(value)));
    algorithm = *known;
  }
  static void read_value(const Fields& object, std::string_view key, const Json& value,
                         config::Protocol& protocol) {
    const auto known = config::parse_named(config::protocol_names(), text(object, key, value));
    if (!known) object.fail(fmt::format("unknown protocol {}", json_excerpt(value)));
    protocol = known.value_or(config::Protocol::kSimple);
  }
  static void read_value(const Fields& object, std::string_view key, const Json& value,
                         collectives::CollectiveKind& kind) {
    const auto known = collective_kind_labelled(text(object, key, value));
    if (!known) object.fail(fmt::format("unknown collective type {}", json_excerpt(value)));
    kind = *known;
  }
  template <engine::ResultRecord Record>
  void read_value(const Fields& object, std::string_view key, const Json& value,
                  std::vector<Record>& records) const {
    if (!value.is_array()) unexpected(object, key, value);
    records.clear();
    for (size_t i = 0; i < value.size(); ++i) {
      const Fields item(object.path(), fmt::format("{}[{}]", object.inner(key), i), value[i]);
      read(item, records.emplace_back());
    }
  }
  template <typename Value>
  static void read_value(const Fields& object, std::string_view key, const Json& value,
                         Value& into) {
    // nlohmann converts a negative or fractional number, or one out of range, to an integer
    // without a word (-1 read as 2^64 - 1): an integer member takes only an integer it holds.
    if constexpr (std::is_integral_v<Value> && !std::is_same_v<Value, bool>) {
      // The parser holds a number without a sign as unsigned, one with a minus as signed.
      using Limits = std::numeric_limits<Value>;
      bool fits = false;
      if (value.is_number_unsigned()) {
        fits = value.get<uint64_t>() <= static_cast<uint64_t>(Limits::max());
      } else if (value.is_number_integer()) {
        fits = Limits::is_signed && value.get<int64_t>() >= static_cast<int64_t>(Limits::min());
      }
      if (!fits) unexpected(object, key, value);
    }
    try {
      into = value.get<Value>();
    } catch (const Json::exception&) {
      unexpected(object, key, value);
    }
  }

  static std::string text(const Fields& object, std::string_view key, const Json& value) {
    if (!value.is_string()) unexpected(object, key, value);
    return value.get<std::string>();
  }
  uint32_t job_index(const Fields& object, std::string_view key, const Json& value) const {
    const std::string name = text(object, key, value);
    for (size_t j = 0; j < results_.jobs.size(); ++j) {
      if (results_.jobs[j].name == name) return static_cast<uint32_t>(j);
    }
    object.fail(fmt::format("job \"{}\" is not in jobs[]", name));
  }
  static int64_t group_key(const Fields& object, std::string_view key, const Json& value) {
    if (value.is_number_integer()) return value.get<int64_t>();
    if (value == "all") return -1;
    if (value == "p2p") return engine::kPointToPointGroup;
    unexpected(object, key, value);
  }
  [[noreturn]] static void unexpected(const Fields& object, std::string_view key,
                                      const Json& value) {
    object.fail(fmt::format("\"{}\": unexpected value {}", key, json_excerpt(value)));
  }

  const engine::RunResults& results_;
};

}  // namespace

engine::RunResults read_summary_json(const std::string& path) {
  std::string text;
  try {
    text = read_bounded_file(path, kMaxSummaryJsonBytes, "a summary.json");
  } catch (const InputFileError& e) {
    if (e.reason() == InputFileError::Reason::kOpen) {
      throw ReportInputError(fmt::format("{}: cannot open (not a results directory?)", path));
    }
    throw ReportInputError(fmt::format("{}: {}", path, e.what()));
  }
  return summary_from_text(text, path);
}

engine::RunResults summary_from_text(const std::string& text, const std::string& path) {
  Json json;
  try {
    json = parse_summary_json(text);
  } catch (const SummaryJsonError& e) {
    throw ReportInputError(fmt::format("{}: {}", path, e.what()));
  }
  const Fields doc(path, "", json);
  engine::RunResults results;
  SummaryJsonReader(results).read(doc, results);
  // A run on devices in the lab is timed by the wall clock; the twin's by virtual time.
  results.wall_clock = results.topology == "device-under-test";
  return results;
}

}  // namespace etwire::outputs::report
