#include "outputs/node_csv_writer.h"

#include <fmt/format.h>

#include <iterator>
#include <utility>

#include "outputs/results_files.h"

namespace etwire::outputs {

NodeCsvWriter::NodeCsvWriter(std::string path, std::vector<std::string> job_names)
    : file_(std::move(path)), job_names_(std::move(job_names)) {
  file_.buffer() += "job,rank,iteration,node_id,name,type,instance,start_ns,end_ns\n";
}

void NodeCsvWriter::append(const engine::NodeRow& row) {
  std::string& out = file_.buffer();
  if (row.job < job_names_.size()) {
    append_csv_text(job_names_[row.job], out);
  } else {
    fmt::format_to(std::back_inserter(out), "{}", row.job);
  }
  fmt::format_to(std::back_inserter(out), ",{},{},{},", row.rank, row.iteration, row.node->id);
  append_csv_text(row.node->name, out);
  out += ',';
  out += trace::node_type_name(row.node->type);
  out += ',';
  if (row.instance >= 0) fmt::format_to(std::back_inserter(out), "{}", row.instance);
  fmt::format_to(std::back_inserter(out), ",{},{}\n", row.start, row.end);
  ++rows_;
  file_.appended();
}

}  // namespace etwire::outputs
