#include "outputs/report/comparison_html.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "outputs/compare/comparison_report.h"
#include "outputs/report/html_tables.h"

namespace etwire::outputs::report {

void append_comparison_html(const RunComparison& c, std::string& out) {
  out += "<h2>Comparison: delta = B - A</h2>\n";
  const std::string verdict = tolerance_verdict(c);
  if (verdict.empty()) {
    out += "<p class=\"verdict\">No tolerance given (compare --tolerance): deltas only.</p>\n";
  } else {
    out += fmt::format("<p class=\"verdict {}\">{}: {}</p>\n", c.exceeded() == 0 ? "pass" : "fail",
                       c.exceeded() == 0 ? "PASS" : "FAIL", html_escape(verdict));
  }
  out += fmt::format("<p class=\"meta\">A = {} ({}); B = {} ({})</p>\n", html_escape(c.label_a),
                     html_escape(c.a.dir.string()), html_escape(c.label_b),
                     html_escape(c.b.dir.string()));
  if (!c.only_in_a.empty()) {
    out += fmt::format("<p class=\"note\">Only {} has {}</p>\n", html_escape(c.label_a),
                       html_escape(fmt::format("{}", fmt::join(c.only_in_a, ", "))));
  }
  if (!c.only_in_b.empty()) {
    out += fmt::format("<p class=\"note\">Only {} has {}</p>\n", html_escape(c.label_b),
                       html_escape(fmt::format("{}", fmt::join(c.only_in_b, ", "))));
  }
  for (const ComparisonSection& section : comparison_sections(c)) {
    out += fmt::format("<h3>{}</h3>\n", html_escape(section.title));
    append_html_table(section.table, out, section.beyond);
  }
}

}  // namespace etwire::outputs::report
