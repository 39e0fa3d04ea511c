#include "transport/flow_record_csv.h"

#include <charconv>
#include <cstdint>

namespace etwire::transport {

namespace {

template <typename Integer>
void append_number(Integer value, std::string& out) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  out.append(digits, end);
}

void append_time(clock::Nanos time, std::string& out) {
  if (time != clock::kNever) append_number(time, out);
}

}  // namespace

std::string_view flow_csv_header() {
  // FlowTags::user is left out: the poster's own bookkeeping, opaque here, and a number above
  // 2^63 that spreadsheets and databases read as text.
  return "flow_id,src_rank,dst_rank,collective,chunk,qp_index,src_port,dst_port,qpn,dest_qpn,bytes,"
         "posted_ns,first_byte_ns,delivered_ns,finished_ns,fct_ns,packets,retransmitted_packets,"
         "cnps,ecn_marks,status\n";
}

void append_flow_csv(const FlowRecord& record, std::string& out) {
  const auto field = [&out](auto value) {
    append_number(value, out);
    out += ',';
  };
  field(record.flow_id);
  field(record.tags.src_rank);
  field(record.tags.dst_rank);
  field(record.tags.collective);
  field(record.tags.chunk);
  field(record.tags.qp_index);
  field(record.src_port);
  field(record.dst_port);
  field(record.qpn);
  field(record.dest_qpn);
  field(record.bytes);
  field(record.posted_at);
  append_time(record.first_byte_out, out);
  out += ',';
  append_time(record.delivered_at, out);
  out += ',';
  append_time(record.finished_at, out);
  out += ',';
  if (record.delivered_at != clock::kNever) append_number(record.fct(), out);
  out += ',';
  field(record.packets);
  field(record.retransmitted_packets);
  field(record.cnps);
  field(record.ecn_marks);
  out += flow_status_name(record.status);
  out += '\n';
}

}  // namespace etwire::transport
