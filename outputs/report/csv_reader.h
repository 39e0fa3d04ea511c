// Reads a results CSV file (flows.csv, ports.csv, queues.csv, collectives.csv) line by line, by
// column name, so a report reads files with more columns than it knows (a later version's) and
// fails clearly on a file that lacks one it needs. Fields may be quoted ("a,b"; "" for a quote).
// Every error is a ReportInputError "<path>:<line>: <what>".
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace etwire::outputs::report {

class CsvReader {
 public:
  static constexpr size_t kMaxLineBytes = size_t{1} << 20;

  // Opens `path` and reads its header line.
  explicit CsvReader(std::string path);

  // The index of the column named `name`; throws when the header has none.
  size_t column(std::string_view name) const;
  // Whether the header has a column named `name`.
  bool has_column(std::string_view name) const;

  // Reads the next row; false at the end of the file. A row with fewer fields than the header
  // throws.
  bool next();
  std::string_view text(size_t column) const { return fields_[column]; }
  // The field as a number; throws unless the whole field is one. An empty field is `empty`.
  int64_t integer(size_t column, int64_t empty = 0) const;
  double real(size_t column, double empty = 0) const;

  const std::string& path() const { return path_; }
  uint64_t line() const { return line_; }
  // Throws ReportInputError naming the file and the current line.
  [[noreturn]] void fail(std::string_view what) const;

 private:
  // Reads the next line into text_ (without its '\n'); false at the end of the file. A line
  // longer than kMaxLineBytes throws: no results file has one, and an endless line (/dev/zero
  // in place of a CSV) must not be held whole.
  bool read_line();
  void split();

  std::string path_;
  std::ifstream in_;
  uint64_t line_ = 0;
  std::string text_;
  std::vector<char> line_buffer_;
  std::string unquoted_;  // storage of the fields that held quotes
  std::vector<std::string> header_;
  std::vector<std::string_view> fields_;
};

}  // namespace etwire::outputs::report
