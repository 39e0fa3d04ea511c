// Every QP's messages (flows.csv) as slices from posting to the last acknowledgement, per
// sending port and QP number.
#include <fmt/format.h>

#include "outputs/qp_results.h"
#include "outputs/results_files.h"
#include "outputs/timeline/lane_assigner.h"
#include "outputs/timeline/timeline_tracks.h"

namespace etwire::outputs::timeline {

namespace {

struct FlowColumns {
  explicit FlowColumns(const report::CsvReader& csv)
      : flow_id(csv.column("flow_id")),
        src_rank(csv.column("src_rank")),
        dst_rank(csv.column("dst_rank")),
        collective(csv.column("collective")),
        chunk(csv.column("chunk")),
        src_port(csv.column("src_port")),
        dst_port(csv.column("dst_port")),
        qpn(csv.column("qpn")),
        bytes(csv.column("bytes")),
        posted(csv.column("posted_ns")),
        first_byte(csv.column("first_byte_ns")),
        delivered(csv.column("delivered_ns")),
        finished(csv.column("finished_ns")),
        packets(csv.column("packets")),
        retransmitted(csv.column("retransmitted_packets")),
        cnps(csv.column("cnps")),
        ecn_marks(csv.column("ecn_marks")),
        status(csv.column("status")) {}
  size_t flow_id, src_rank, dst_rank, collective, chunk, src_port, dst_port, qpn, bytes, posted,
      first_byte, delivered, finished, packets, retransmitted, cnps, ecn_marks, status;
};

struct FlowSlice {
  uint32_t port = 0;
  int64_t qpn = 0;
  int64_t start = 0;
  int64_t end = 0;
};

FlowSlice read_flow(const TimelineContext& context, const report::CsvReader& csv,
                    const FlowColumns& c) {
  FlowSlice slice;
  slice.port = context.port_index(csv, csv.integer(c.src_port));
  slice.qpn = csv.integer(c.qpn);
  if (slice.qpn < 0 || slice.qpn > 0xffffff) csv.fail("qpn is not a 24-bit QP number");
  slice.start = csv.integer(c.posted);
  slice.end = csv.integer(c.finished);
  if (slice.end < slice.start) csv.fail("finished_ns is before posted_ns");
  return slice;
}

// An empty field (a flow that never delivered) is left out of the slice's arguments.
void put_if_known(nlohmann::json& args, const char* key, const report::CsvReader& csv,
                  size_t column) {
  if (!csv.text(column).empty()) args[key] = csv.integer(column);
}

}  // namespace

uint64_t write_qp_tracks(TimelineContext& context, TrackThreads& threads) {
  const std::string path = context.run.file("flows.csv").string();
  LaneAssigner lanes;
  {
    report::CsvReader csv(path);
    const FlowColumns columns(csv);
    while (csv.next()) {
      const FlowSlice slice = read_flow(context, csv, columns);
      lanes.add((uint64_t{slice.port} << 24) | static_cast<uint64_t>(slice.qpn), slice.start,
                slice.end);
    }
  }
  lanes.assign();
  report::CsvReader csv(path);
  const FlowColumns c(csv);
  uint64_t row = 0;
  for (; row < lanes.slices() && csv.next(); ++row) {
    const FlowSlice slice = read_flow(context, csv, c);
    const uint32_t dst = context.port_index(csv, csv.integer(c.dst_port));
    const uint32_t pid = context.port_pid(slice.port);
    const uint32_t tid = threads.tid(
        pid, static_cast<uint32_t>(slice.qpn), lanes.lane(row),
        fmt::format("QP {} to {}", slice.qpn, qp_port_name(context.run.results, dst)), slice.qpn);
    nlohmann::json args = {{"flow_id", csv.integer(c.flow_id)},
                           {"src_rank", csv.integer(c.src_rank)},
                           {"dst_rank", csv.integer(c.dst_rank)},
                           {"collective", csv.integer(c.collective)},
                           {"chunk", csv.integer(c.chunk)},
                           {"bytes", csv.integer(c.bytes)},
                           {"packets", csv.integer(c.packets)},
                           {"retransmitted_packets", csv.integer(c.retransmitted)},
                           {"cnps", csv.integer(c.cnps)},
                           {"ecn_marks", csv.integer(c.ecn_marks)},
                           {"status", csv.text(c.status)}};
    put_if_known(args, "first_byte_ns", csv, c.first_byte);
    put_if_known(args, "delivered_ns", csv, c.delivered);
    const engine::CollectiveRecord* record = context.instance(csv.integer(c.collective));
    const std::string name = record ? collective_type_label(record->kind) : "message";
    const bool completed = csv.text(c.status) == "completed";
    context.out.slice(pid, tid, name, completed ? "flow" : "flow (failed)", slice.start, slice.end,
                      args);
  }
  return row;
}

}  // namespace etwire::outputs::timeline
