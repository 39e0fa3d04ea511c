// Column-aligned plain-text tables for console reports (inspect, feed, and later run summaries).
#pragma once

#include <string>
#include <vector>

namespace etwire {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> headers);
  // Cells beyond the header count are dropped; missing cells print empty.
  void add_row(std::vector<std::string> cells);
  // First column left-aligned, the others right-aligned (they are numbers), two spaces apart.
  std::string render() const;
  size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace etwire
