#include "outputs/timeline/trace_event_writer.h"

#include <fmt/format.h>

#include <iterator>
#include <optional>
#include <utility>

namespace etwire::outputs::timeline {

namespace {

// Nanoseconds as the format's microseconds, digit for digit (a double would round long runs).
void append_microseconds(int64_t ns, std::string& out) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  fmt::format_to(std::back_inserter(out), "{}.{:03}", ns / 1000, ns % 1000);
}

void append_string(std::string_view text, std::string& out) {
  out += nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

TraceEventWriter::TraceEventWriter(std::string path)
    : file_(std::move(path), StreamedFile::Mode::kReplaceAtClose) {
  file_.buffer() += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
}

std::string& TraceEventWriter::begin(char phase, uint32_t pid) {
  std::string& out = file_.buffer();
  if (events_ > 0) out += ",\n";
  fmt::format_to(std::back_inserter(out), "{{\"ph\":\"{}\",\"pid\":{}", phase, pid);
  return out;
}

void TraceEventWriter::end() {
  file_.buffer() += '}';
  ++events_;
  file_.appended();
}

void TraceEventWriter::metadata(uint32_t pid, std::optional<uint32_t> tid, std::string_view what,
                                std::string_view name, int64_t sort_index) {
  for (const bool sort : {false, true}) {
    std::string& out = begin('M', pid);
    if (tid) fmt::format_to(std::back_inserter(out), ",\"tid\":{}", *tid);
    fmt::format_to(std::back_inserter(out), ",\"name\":\"{}_{}\",\"args\":{{", what,
                   sort ? "sort_index" : "name");
    if (sort) {
      fmt::format_to(std::back_inserter(out), "\"sort_index\":{}}}", sort_index);
    } else {
      out += "\"name\":";
      append_string(name, out);
      out += '}';
    }
    end();
  }
}

void TraceEventWriter::process(uint32_t pid, std::string_view name, int64_t sort_index) {
  metadata(pid, std::nullopt, "process", name, sort_index);
}

void TraceEventWriter::thread(uint32_t pid, uint32_t tid, std::string_view name,
                              int64_t sort_index) {
  metadata(pid, tid, "thread", name, sort_index);
}

void TraceEventWriter::slice(uint32_t pid, uint32_t tid, std::string_view name,
                             std::string_view category, int64_t start_ns, int64_t end_ns,
                             const nlohmann::json& args) {
  std::string& out = begin('X', pid);
  fmt::format_to(std::back_inserter(out), ",\"tid\":{},\"name\":", tid);
  append_string(name, out);
  out += ",\"cat\":";
  append_string(category, out);
  out += ",\"ts\":";
  append_microseconds(start_ns, out);
  out += ",\"dur\":";
  append_microseconds(end_ns - start_ns, out);
  out += ",\"args\":";
  out += args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  end();
}

void TraceEventWriter::counter(uint32_t pid, std::string_view name, int64_t at_ns,
                               const nlohmann::json& values) {
  std::string& out = begin('C', pid);
  out += ",\"name\":";
  append_string(name, out);
  out += ",\"ts\":";
  append_microseconds(at_ns, out);
  out += ",\"args\":";
  out += values.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  end();
}

void TraceEventWriter::close(const nlohmann::json& other_data) {
  std::string& out = file_.buffer();
  out += "\n],\"otherData\":";
  out += other_data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out += "}\n";
  file_.appended();
  file_.close();
}

}  // namespace etwire::outputs::timeline
