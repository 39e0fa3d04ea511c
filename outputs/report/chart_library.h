// Chart.js 3 (MIT licence), the plotting library of `etwire report`'s HTML page: the minified
// file of Debian's libjs-chart.js, compiled in at build time (outputs/report/CMakeLists.txt) and
// written inline into every report, so a report needs no network and no file beside it.
#pragma once

#include <string_view>

namespace etwire::outputs::report {

std::string_view chart_library_js();

}  // namespace etwire::outputs::report
