// Text and tables as the report's HTML writes them: escaped, and the tables the console prints
// (TableCells) as <table> elements.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "outputs/result_tables.h"

namespace etwire::outputs::report {

// `text` with &, <, > and " escaped, for an element's text or an attribute's value.
std::string html_escape(std::string_view text);

// The table; a row whose entry in `marked` is true gets class="marked" (a delta beyond its
// tolerance).
void append_html_table(const TableCells& cells, std::string& out,
                       const std::vector<bool>& marked = {});

}  // namespace etwire::outputs::report
