#include "control/load/infragraph_slice.h"

#include <fmt/format.h>

#include <charconv>

namespace etwire::control::infragraph {

namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// An index of a slice; nullopt when the text is not a whole number.
std::optional<int64_t> parse_index(std::string_view text) {
  text = trim(text);
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

// Python slice notation, as InfraGraph writes it: parts may be left out ("[:4]", "[2:]").
std::optional<Step> parse_step(std::string_view text) {
  Step step;
  const size_t open = text.find('[');
  if (open == std::string_view::npos) {
    step.name = std::string(trim(text));
    if (step.name.empty() || step.name.find(']') != std::string::npos) return std::nullopt;
    return step;
  }
  if (text.back() != ']') return std::nullopt;
  step.name = std::string(trim(text.substr(0, open)));
  std::string_view inside = text.substr(open + 1, text.size() - open - 2);
  if (step.name.empty() || inside.find_first_of("[]") != std::string_view::npos) {
    return std::nullopt;
  }
  std::vector<std::string_view> parts;
  for (size_t from = 0;;) {
    const size_t colon = inside.find(':', from);
    parts.push_back(inside.substr(from, colon == std::string_view::npos ? colon : colon - from));
    if (colon == std::string_view::npos) break;
    from = colon + 1;
  }
  if (parts.size() > 3) return std::nullopt;
  std::optional<int64_t>* fields[] = {&step.start, &step.stop, &step.stride};
  for (size_t i = 0; i < parts.size(); ++i) {
    if (trim(parts[i]).empty()) continue;
    *fields[i] = parse_index(parts[i]);
    if (!*fields[i]) return std::nullopt;
  }
  if (parts.size() == 1) {
    if (!step.start) return std::nullopt;
    step.single = true;
  }
  return step;
}

// The indexes out of `count` that a step takes; "" or why it cannot.
std::string pick(const Step& step, uint32_t count, std::vector<uint32_t>& out) {
  if (step.single) {
    if (*step.start < 0 || *step.start >= count) {
      return fmt::format("index {} is outside {}'s {} (0 to {})", *step.start, step.name, count,
                         count - 1);
    }
    out.push_back(static_cast<uint32_t>(*step.start));
    return "";
  }
  const int64_t start = step.start.value_or(0);
  const int64_t stop = step.stop.value_or(count);
  const int64_t stride = step.stride.value_or(1);
  if (start < 0 || stop < 0 || stride <= 0) {
    return fmt::format("negative indexes and steps are not read: give {}'s indexes from 0 to {}",
                       step.name, count - 1);
  }
  if (start > count || stop > count) {
    return fmt::format("the slice {}:{} reaches beyond {}'s {}", start, stop, step.name, count);
  }
  // A step past the count takes only the first index, which no one means; and with it as large
  // as an int64 holds, i + stride would wrap past the stop.
  if (stride > count) {
    return fmt::format("the step {} is larger than {}'s {}: give one from 1 to {}", stride,
                       step.name, count, count);
  }
  for (int64_t i = start; i < stop; i += stride) out.push_back(static_cast<uint32_t>(i));
  if (out.empty()) return fmt::format("the slice {}:{} of {} is empty", start, stop, step.name);
  return "";
}

}  // namespace etwire::control::infragraph
