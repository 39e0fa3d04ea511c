// What the section parsers ask of a configuration, written down as they ask: each key path (list
// elements as "[]") with the kind of value read there, its range and its accepted names. A
// DocumentContext carries a recorder only while the JSON Schema is being written
// (control/resolve/config_schema.h); loading a configuration records nothing. Internal to control/.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace etwire::control {

enum class ValueKind {
  kAny,  // asked about (present or not) but read elsewhere or by hand
  kText,
  kSection,
  kList,
  kBoolean,
  kInteger,
  kReal,
  kBytes,
  kRate,
  kDuration,
  kChoice,
  kMac,
  kIpv4,
  kIpv6,
};

struct ExpectedValue {
  ValueKind kind = ValueKind::kAny;
  // What the reader's messages say it expects ("an integer from 1 to 9000").
  std::string description;
  // kInteger and kReal; kBytes in plain bytes, kRate in bits per second (a bare number's unit).
  double min = std::numeric_limits<double>::lowest();
  double max = std::numeric_limits<double>::max();
  bool min_open = false;
  std::vector<std::string> names = {};  // kChoice
};

class SchemaRecorder {
 public:
  // Notes what `key_path` ("fabric.faults[2].kind") expects, under its general path
  // ("fabric.faults[].kind"). A kind that says more replaces one that says less (a key first
  // asked about with has(), then read as an integer); of two definite kinds the first stays.
  void expect(std::string_view key_path, ExpectedValue value);

  // Every general path noted, in order.
  const std::map<std::string, ExpectedValue>& expected() const { return expected_; }

 private:
  std::map<std::string, ExpectedValue> expected_;
};

// "ports[3].dpdk.lcores[0]" -> "ports[].dpdk.lcores[]".
std::string general_path(std::string_view key_path);

}  // namespace etwire::control
