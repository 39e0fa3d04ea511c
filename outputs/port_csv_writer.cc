#include "outputs/port_csv_writer.h"

#include <fmt/format.h>

#include <cmath>

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

namespace {

// A row per port per sample adds up on long runs: integers go in without a format string.
template <typename Integer>
void append_integer(Integer value, std::string& out) {
  const fmt::format_int text(value);
  out.append(text.data(), text.size());
}

}  // namespace

void PortCsvWriter::append(const engine::PortSeriesRow& row) {
  std::string& out = file_.buffer();
  append_integer(row.at, out);
  out += ',';
  out += row.port;
  for (size_t f = 0; f < dataplane::kPortCounterFields.size(); ++f) {
    out += ',';
    if ((row.absent & dataplane::port_counter_bit(f)) != 0) continue;  // not counted: empty
    append_integer(row.counters->*dataplane::kPortCounterFields[f].member, out);
  }
  out += ',';
  append_integer(static_cast<uint64_t>(std::llround(row.paced_rate_bps)), out);
  out += '\n';
  ++rows_;
  file_.appended();
}

}  // namespace etwire::outputs
