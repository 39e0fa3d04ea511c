// Flow records as CSV, one line per flow: the file format of flow records after a run, and the
// canonical byte form the determinism tests compare.
#pragma once

#include <string>

#include "transport/flow_record.h"

namespace etwire::transport {

// The header line, ending in a newline.
std::string_view flow_csv_header();

// Appends one record as a line (ending in a newline). Times are integer nanoseconds; a time that
// never happened (a failed flow's delivery) is left empty.
void append_flow_csv(const FlowRecord& record, std::string& out);

}  // namespace etwire::transport
