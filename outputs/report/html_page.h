// The frame every page of `etwire report` shares: its style, Chart.js inline, the charts' data
// and the script that draws them, so that a page opens offline and loads nothing.
//
// Each chart's box carries, once Chart.js has drawn it, data-points (the points drawn, summed over
// its small charts) and data-rendered="true"; a chart without data shows why and carries
// data-points="0" and data-note="true". The Chromium test reads these.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "outputs/report/report_chart.h"

namespace etwire::outputs::report {

// The page's head and its title as the first heading.
std::string html_page_start(std::string_view title);

// A chart's heading, its notes, the box the script draws it in and its caption.
void append_chart(const ReportChart& chart, std::string_view caption, std::string& out);

// Chart.js, the data ({"runs": runs, "charts": [each chart's to_json()]}) and the script that
// draws every chart; closes the page.
void append_html_page_end(const std::vector<ReportChart>& charts, nlohmann::json runs,
                          std::string& out);

}  // namespace etwire::outputs::report
