#include "trace/node_source.h"

#include "trace/byte_source.h"
#include "trace/et_reader.h"
#include "trace/feeder_json_reader.h"
#include "trace/format_sniffer.h"
#include "trace/jsonizer_reader.h"

namespace etwire::trace {

std::unique_ptr<NodeSource> open_node_source(const std::string& path, TraceFormat format) {
  std::unique_ptr<ByteSource> bytes = ByteSource::open(path);
  if (format == TraceFormat::kAuto) format = sniff_trace_format(*bytes);
  switch (format) {
    case TraceFormat::kFeederJson:
      return make_feeder_json_reader(std::move(bytes));
    case TraceFormat::kJsonizerDump:
      return make_jsonizer_reader(std::move(bytes));
    case TraceFormat::kAuto:
    case TraceFormat::kBinary:
      break;
  }
  return make_et_reader(std::move(bytes));
}

}  // namespace etwire::trace
