#include "outputs/report/csv_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "common/exact_bytes.h"
#include "outputs/report/report_input_error.h"

namespace etwire::outputs::report {

CsvReader::CsvReader(std::string path)
    : path_(std::move(path)), in_(path_), line_buffer_(kMaxLineBytes + 1) {
  if (!in_) throw ReportInputError(fmt::format("{}: cannot open", path_));
  if (!read_line()) throw ReportInputError(fmt::format("{}: empty file", path_));
  line_ = 1;
  split();
  for (std::string_view name : fields_) header_.emplace_back(name);
}

size_t CsvReader::column(std::string_view name) const {
  const auto found = std::find(header_.begin(), header_.end(), name);
  if (found == header_.end()) {
    throw ReportInputError(fmt::format("{}:1: no column \"{}\" in the header", path_, name));
  }
  return static_cast<size_t>(found - header_.begin());
}

bool CsvReader::has_column(std::string_view name) const {
  return std::find(header_.begin(), header_.end(), name) != header_.end();
}

bool CsvReader::next() {
  while (read_line()) {
    ++line_;
    if (!text_.empty() && text_.back() == '\r') text_.pop_back();
    if (text_.empty()) continue;
    split();
    if (fields_.size() < header_.size()) {
      fail(fmt::format("{} fields, the header has {}", fields_.size(), header_.size()));
    }
    return true;
  }
  if (in_.bad()) throw ReportInputError(fmt::format("{}: read error", path_));
  return false;
}

bool CsvReader::read_line() {
  // getline() into a buffer with room for the longest line and the terminating '\0': a longer
  // line stops there (failbit with a full count) instead of growing.
  const auto size = static_cast<std::streamsize>(line_buffer_.size());
  in_.getline(line_buffer_.data(), size);
  const std::streamsize count = in_.gcount();
  if (in_.fail() && !in_.bad() && count == size - 1) {
    throw ReportInputError(fmt::format("{}:{}: a line longer than {}: not a results file", path_,
                                       line_ + 1, format_bytes_exact(kMaxLineBytes)));
  }
  if (in_.fail()) return false;
  // gcount() counts the '\n' that getline() extracted but did not store; a last line without
  // one ends at the end of the file instead.
  const std::streamsize stored = in_.eof() ? count : count - 1;
  text_.assign(line_buffer_.data(), static_cast<size_t>(stored));
  return true;
}

void CsvReader::split() {
  fields_.clear();
  // Quoted fields are copied unquoted into one buffer sized up front, so the views stay valid.
  unquoted_.clear();
  unquoted_.reserve(text_.size());
  std::string_view rest = text_;
  while (true) {
    if (!rest.empty() && rest.front() == '"') {
      const size_t begin = unquoted_.size();
      size_t i = 1;
      for (; i < rest.size(); ++i) {
        if (rest[i] != '"') {
          unquoted_ += rest[i];
        } else if (i + 1 < rest.size() && rest[i + 1] == '"') {
          unquoted_ += '"';
          ++i;
        } else {
          break;
        }
      }
      if (i >= rest.size()) fail("a quoted field does not end");
      fields_.emplace_back(unquoted_.data() + begin, unquoted_.size() - begin);
      rest.remove_prefix(i + 1);
      if (rest.empty()) break;
      if (rest.front() != ',') fail("text after a quoted field");
      rest.remove_prefix(1);
      continue;
    }
    const size_t comma = rest.find(',');
    fields_.push_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
}

int64_t CsvReader::integer(size_t column, int64_t empty) const {
  const std::string_view field = fields_[column];
  if (field.empty()) return empty;
  int64_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size()) {
    fail(fmt::format("column \"{}\": expected an integer, got \"{}\"", header_[column], field));
  }
  return value;
}

double CsvReader::real(size_t column, double empty) const {
  const std::string_view field = fields_[column];
  if (field.empty()) return empty;
  double value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size()) {
    fail(fmt::format("column \"{}\": expected a number, got \"{}\"", header_[column], field));
  }
  return value;
}

void CsvReader::fail(std::string_view what) const {
  throw ReportInputError(fmt::format("{}:{}: {}", path_, line_, what));
}

}  // namespace etwire::outputs::report
