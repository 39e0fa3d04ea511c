#include "control/load/value_readers.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "common/duration.h"
#include "common/exact_bytes.h"
#include "common/rate.h"
#include "common/units.h"
#include "common/utf8.h"

namespace etwire::control {

namespace {

// The scalar's text when the node is a scalar; otherwise reports `expected` and returns false.
bool scalar_text(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
                 const std::string& expected, std::string& out) {
  if (!node.IsScalar()) {
    ctx.error(Problem::kWrongType, node, path,
              fmt::format("expected {}, got {}", expected, describe_value(node)));
    return false;
  }
  if (const std::optional<size_t> bad = first_invalid_utf8(node.Scalar())) {
    // The bytes themselves would garble the message: say where they are instead.
    ctx.error(Problem::kBadValue, node, path,
              fmt::format("expected {} in UTF-8, got bytes that are not UTF-8 (byte {} of the "
                          "value)",
                          expected, *bad + 1));
    return false;
  }
  // A NUL or another control character (a YAML escape such as "\0", "\b" or "\x85" makes one)
  // would pass unseen into names, paths and results; tabs and line breaks are text.
  const std::string& value = node.Scalar();
  if (const std::optional<ControlCharacter> control = first_control_character(value)) {
    ctx.error(
        Problem::kBadValue, node, path,
        fmt::format("expected {}, got a value holding the control character U+{:04X} "
                    "(byte {} of the value)",
                    expected, static_cast<uint32_t>(control->code_point), control->offset + 1));
    return false;
  }
  out = value;
  return true;
}

std::string trimmed(const std::string& text) {
  size_t begin = 0;
  size_t end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

std::optional<int64_t> parse_integer(const std::string& raw) {
  std::string text = trimmed(raw);
  bool negative = false;
  size_t at = 0;
  if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    negative = text[at] == '-';
    ++at;
  }
  int base = 10;
  if (text.size() > at + 2 && text[at] == '0' && (text[at + 1] == 'x' || text[at + 1] == 'X')) {
    base = 16;
    at += 2;
  }
  if (at >= text.size()) return std::nullopt;
  uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), magnitude, base);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (negative) {
    if (magnitude > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return magnitude == static_cast<uint64_t>(INT64_MAX) + 1 ? INT64_MIN
                                                             : -static_cast<int64_t>(magnitude);
  }
  if (magnitude > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(magnitude);
}

std::optional<double> parse_plain_real(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<double> parse_real(const std::string& raw) {
  std::string text = trimmed(raw);
  size_t slash = text.find('/');
  if (slash == std::string::npos) return parse_plain_real(text);
  auto numerator = parse_plain_real(trimmed(text.substr(0, slash)));
  auto denominator = parse_plain_real(trimmed(text.substr(slash + 1)));
  if (!numerator || !denominator || *denominator == 0) return std::nullopt;
  return *numerator / *denominator;
}

std::string integer_range(int64_t min, int64_t max) {
  if (max == INT64_MAX) return fmt::format("an integer of at least {}", min);
  return fmt::format("an integer from {} to {}", min, max);
}

std::string real_range(const RealRange& range) {
  bool unbounded = range.max == std::numeric_limits<double>::max();
  if (range.min_open) {
    return unbounded ? fmt::format("a number above {}", range.min)
                     : fmt::format("a number above {} and at most {}", range.min, range.max);
  }
  return unbounded ? fmt::format("a number of at least {}", range.min)
                   : fmt::format("a number from {} to {}", range.min, range.max);
}

template <class Format>
std::string quantity_range(const char* kind, const char* example, uint64_t min, uint64_t max,
                           Format format) {
  if (max == UINT64_MAX) {
    return min == 0 ? fmt::format("{} like \"{}\"", kind, example)
                    : fmt::format("{} like \"{}\" of at least {}", kind, example, format(min));
  }
  return fmt::format("{} like \"{}\" from {} to {}", kind, example, format(min), format(max));
}

// Shared shape of the unit readers: parse, then range-check.
template <class Parse, class Format>
bool read_quantity(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
                   const std::string& expected, uint64_t min, uint64_t max, Parse parse,
                   Format format, uint64_t& out) {
  std::string text;
  if (!scalar_text(ctx, node, path, expected, text)) return false;
  auto value = parse(text);
  if (!value) {
    ctx.error(Problem::kWrongType, node, path,
              fmt::format("expected {}, got {}", expected, describe_value(node)));
    return false;
  }
  if (*value < min || *value > max) {
    ctx.error(
        Problem::kOutOfRange, node, path,
        fmt::format("expected {}, got {} ({})", expected, describe_value(node), format(*value)));
    return false;
  }
  out = *value;
  return true;
}

}  // namespace

std::string describe_value(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a section (key: value pairs)";
  if (node.IsSequence()) return "a list";
  return fmt::format("\"{}\"", node.Scalar());
}

bool read_text(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
               std::string& out) {
  if (ctx.recording()) ctx.expect(path, expected_plain(ValueKind::kText));
  return scalar_text(ctx, node, path, "text", out);
}

bool read_bool(DocumentContext& ctx, const YAML::Node& node, const std::string& path, bool& out) {
  if (ctx.recording()) ctx.expect(path, expected_plain(ValueKind::kBoolean));
  const std::string expected = "true or false";
  std::string text;
  if (!scalar_text(ctx, node, path, expected, text)) return false;
  std::string word = config::normalize_name(trimmed(text));
  if (word == "true" || word == "yes" || word == "on") {
    out = true;
    return true;
  }
  if (word == "false" || word == "no" || word == "off") {
    out = false;
    return true;
  }
  ctx.error(Problem::kWrongType, node, path,
            fmt::format("expected {}, got {}", expected, describe_value(node)));
  return false;
}

bool read_integer(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
                  int64_t min, int64_t max, int64_t& out) {
  if (ctx.recording()) ctx.expect(path, expected_integer(min, max));
  std::string expected = integer_range(min, max);
  std::string text;
  if (!scalar_text(ctx, node, path, expected, text)) return false;
  auto value = parse_integer(text);
  if (!value) {
    ctx.error(Problem::kWrongType, node, path,
              fmt::format("expected {}, got {}", expected, describe_value(node)));
    return false;
  }
  if (*value < min || *value > max) {
    ctx.error(Problem::kOutOfRange, node, path,
              fmt::format("expected {}, got {}", expected, *value));
    return false;
  }
  out = *value;
  return true;
}

bool read_real(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
               RealRange range, double& out) {
  if (ctx.recording()) ctx.expect(path, expected_real(range));
  std::string expected = real_range(range);
  std::string text;
  if (!scalar_text(ctx, node, path, expected, text)) return false;
  auto value = parse_real(text);
  if (!value) {
    ctx.error(Problem::kWrongType, node, path,
              fmt::format("expected {}, got {}", expected, describe_value(node)));
    return false;
  }
  bool below = range.min_open ? *value <= range.min : *value < range.min;
  if (below || *value > range.max) {
    ctx.error(Problem::kOutOfRange, node, path,
              fmt::format("expected {}, got {}", expected, describe_value(node)));
    return false;
  }
  out = *value;
  return true;
}

bool read_bytes(DocumentContext& ctx, const YAML::Node& node, const std::string& path, uint64_t min,
                uint64_t max, uint64_t& out) {
  if (ctx.recording()) ctx.expect(path, expected_bytes(min, max));
  auto format = [](uint64_t v) { return format_bytes_exact(v); };
  return read_quantity(
      ctx, node, path, quantity_range("a size", "64KiB", min, max, format), min, max,
      [](const std::string& t) { return parse_bytes(t); }, format, out);
}

bool read_rate(DocumentContext& ctx, const YAML::Node& node, const std::string& path, uint64_t min,
               uint64_t max, uint64_t& out) {
  if (ctx.recording()) ctx.expect(path, expected_rate(min, max));
  auto format = [](uint64_t v) { return format_rate(v); };
  return read_quantity(
      ctx, node, path, quantity_range("a rate", "100Gbps", min, max, format), min, max,
      [](const std::string& t) { return parse_rate_bps(t); }, format, out);
}

bool read_duration(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
                   uint64_t min, uint64_t max, uint64_t& out) {
  if (ctx.recording()) ctx.expect(path, expected_duration(min, max));
  auto format = [](uint64_t v) { return format_duration_ns(v); };
  return read_quantity(
      ctx, node, path, quantity_range("a duration", "2us", min, max, format), min, max,
      [](const std::string& t) { return parse_duration_ns(t); }, format, out);
}

bool read_mac(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
              config::MacAddress& out) {
  if (ctx.recording()) ctx.expect(path, expected_plain(ValueKind::kMac));
  const std::string expected = "a MAC address like 02:00:0a:00:00:01";
  std::string text;
  if (!scalar_text(ctx, node, path, expected, text)) return false;
  auto mac = config::MacAddress::parse(trimmed(text));
  if (!mac) {
    ctx.error(Problem::kWrongType, node, path,
              fmt::format("expected {}, got {}", expected, describe_value(node)));
    return false;
  }
  if (mac->is_multicast() || mac->is_zero()) {
    ctx.error(Problem::kBadValue, node, path,
              fmt::format("expected a unicast MAC address, got {} (the low bit of the first "
                          "byte marks multicast)",
                          describe_value(node)));
    return false;
  }
  out = *mac;
  return true;
}

namespace {

// IPv4 and IPv6 are read alike: a scalar that parses as the address, and a unicast one.
template <typename Address>
bool read_unicast_address(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
                          std::string_view family, std::string_view example, Address& out) {
  const std::string expected = fmt::format("an {} address like {}", family, example);
  std::string text;
  if (!scalar_text(ctx, node, path, expected, text)) return false;
  auto ip = Address::parse(trimmed(text));
  if (!ip) {
    ctx.error(Problem::kWrongType, node, path,
              fmt::format("expected {}, got {}", expected, describe_value(node)));
    return false;
  }
  if (!ip->is_unicast()) {
    ctx.error(Problem::kBadValue, node, path,
              fmt::format("expected a unicast {} address, got {}", family, describe_value(node)));
    return false;
  }
  out = *ip;
  return true;
}

}  // namespace

bool read_ipv4(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
               config::Ipv4Address& out) {
  if (ctx.recording()) ctx.expect(path, expected_plain(ValueKind::kIpv4));
  return read_unicast_address(ctx, node, path, "IPv4", "10.0.0.1", out);
}

bool read_ipv6(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
               config::Ipv6Address& out) {
  if (ctx.recording()) ctx.expect(path, expected_plain(ValueKind::kIpv6));
  return read_unicast_address(ctx, node, path, "IPv6", "fd00::1", out);
}

ExpectedValue expected_integer(int64_t min, int64_t max) {
  ExpectedValue value{ValueKind::kInteger, integer_range(min, max)};
  value.min = static_cast<double>(min);
  value.max = static_cast<double>(max);
  return value;
}

ExpectedValue expected_real(RealRange range) {
  ExpectedValue value{ValueKind::kReal, real_range(range)};
  value.min = range.min;
  value.max = range.max;
  value.min_open = range.min_open;
  return value;
}

namespace {

ExpectedValue expected_quantity(ValueKind kind, std::string description, uint64_t min,
                                uint64_t max) {
  ExpectedValue value{kind, std::move(description)};
  value.min = static_cast<double>(min);
  value.max = static_cast<double>(max);
  return value;
}

}  // namespace

ExpectedValue expected_bytes(uint64_t min, uint64_t max) {
  return expected_quantity(
      ValueKind::kBytes,
      quantity_range("a size", "64KiB", min, max, [](uint64_t v) { return format_bytes_exact(v); }),
      min, max);
}

ExpectedValue expected_rate(uint64_t min, uint64_t max) {
  return expected_quantity(
      ValueKind::kRate,
      quantity_range("a rate", "100Gbps", min, max, [](uint64_t v) { return format_rate(v); }), min,
      max);
}

ExpectedValue expected_duration(uint64_t min, uint64_t max) {
  return expected_quantity(ValueKind::kDuration,
                           quantity_range("a duration", "2us", min, max,
                                          [](uint64_t v) { return format_duration_ns(v); }),
                           min, max);
}

ExpectedValue expected_plain(ValueKind kind) {
  switch (kind) {
    case ValueKind::kText:
      return {kind, "text"};
    case ValueKind::kBoolean:
      return {kind, "true or false"};
    case ValueKind::kMac:
      return {kind, "a unicast MAC address like 02:00:0a:00:00:01"};
    case ValueKind::kIpv4:
      return {kind, "a unicast IPv4 address like 10.0.0.1"};
    case ValueKind::kIpv6:
      return {kind, "a unicast IPv6 address like fd00::1"};
    default:
      return {kind, ""};
  }
}

void report_bad_name(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
                     const std::vector<std::string>& allowed, std::string_view what) {
  std::string list;
  for (const auto& name : allowed) list += (list.empty() ? "" : ", ") + name;
  std::string typed = node.IsScalar() ? node.Scalar() : "";
  ctx.error(Problem::kBadValue, node, path,
            fmt::format("expected {}one of {}, got {}{}", what.empty() ? "" : std::string(what),
                        list, describe_value(node), did_you_mean(typed, allowed)));
}

}  // namespace etwire::control
