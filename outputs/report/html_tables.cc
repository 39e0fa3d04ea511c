#include "outputs/report/html_tables.h"

#include <fmt/format.h>

namespace etwire::outputs::report {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void append_html_table(const TableCells& cells, std::string& out, const std::vector<bool>& marked) {
  out += "<table><thead><tr>";
  for (const std::string& h : cells.header) out += fmt::format("<th>{}</th>", html_escape(h));
  out += "</tr></thead><tbody>\n";
  for (size_t r = 0; r < cells.rows.size(); ++r) {
    out += r < marked.size() && marked[r] ? "<tr class=\"marked\">" : "<tr>";
    for (const std::string& cell : cells.rows[r]) {
      out += fmt::format("<td>{}</td>", html_escape(cell));
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
}

}  // namespace etwire::outputs::report
