#include "control/load/nccl_xml.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string_view>
#include <utility>

#include "common/bounded_file.h"

namespace etwire::control {

namespace {

constexpr uint64_t kDeviceBits = (uint64_t{1} << 56) - 1;  // below NCCL's system id

}  // namespace

std::string read_nccl_dump(const std::string& path, uint64_t max_bytes, const char* what) {
  try {
    return read_bounded_file(path, max_bytes, what);
  } catch (const InputFileError& e) {
    throw NcclDumpError(fmt::format("{}: {}", path, e.what()));
  }
}

NcclXmlReader::NcclXmlReader(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  const pugi::xml_parse_result parsed = doc_.load_buffer(text_.data(), text_.size());
  if (!parsed) fail(static_cast<size_t>(parsed.offset), parsed.description());
}

uint32_t NcclXmlReader::device(const pugi::xml_node node, uint32_t limit) const {
  const pugi::xml_attribute attr = node.attribute("dev");
  if (!attr) fail(node, fmt::format("<{}> without a dev attribute", node.name()));
  std::string_view text = attr.value();
  int base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    text.remove_prefix(2);
    base = 16;
  }
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    fail(node, fmt::format("dev=\"{}\" is not a device number", attr.value()));
  }
  value &= kDeviceBits;
  if (value >= limit) fail(node, fmt::format("dev {} is past {} devices", value, limit));
  return static_cast<uint32_t>(value);
}

void NcclXmlReader::fail(const pugi::xml_node node, const std::string& message) const {
  fail(static_cast<size_t>(std::max<ptrdiff_t>(node.offset_debug(), 0)), message);
}

void NcclXmlReader::fail(size_t offset, const std::string& message) const {
  const size_t line =
      1 + static_cast<size_t>(std::count(
              text_.begin(), text_.begin() + static_cast<ptrdiff_t>(std::min(offset, text_.size())),
              '\n'));
  throw NcclDumpError(fmt::format("{}:{}: {}", name_, line, message));
}

}  // namespace etwire::control
