#include "outputs/port_csv_writer.h"

#include <fmt/format.h>

#include <iterator>

namespace etwire::outputs {

PortCsvWriter::PortCsvWriter(std::string path) : file_(std::move(path)) {
  std::string& out = file_.buffer();
  out += "time_ns,port";
  for (const dataplane::PortCounterField& field : dataplane::kPortCounterFields) {
    out += ',';
    out += field.name;
  }
  out += ",paced_rate_bps\n";
}

void PortCsvWriter::append(const engine::PortSeriesRow& row) {
  std::string& out = file_.buffer();
  fmt::format_to(std::back_inserter(out), "{},{}", row.at, row.port);
  for (size_t f = 0; f < dataplane::kPortCounterFields.size(); ++f) {
    out += ',';
    if ((row.absent & dataplane::port_counter_bit(f)) != 0) continue;  // not counted: empty
    fmt::format_to(std::back_inserter(out), "{}",
                   row.counters->*dataplane::kPortCounterFields[f].member);
  }
  fmt::format_to(std::back_inserter(out), ",{:.0f}\n", row.paced_rate_bps);
  ++rows_;
  file_.appended();
}

}  // namespace etwire::outputs
