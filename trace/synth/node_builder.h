// Builds TraceNodes for writing: each attribute is appended to `attrs` (what the binary writer
// serialises) and mirrored in the decoded field a reader would fill, so one node serves both
// writer kinds and in-memory tests alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "trace/node.h"

namespace etwire::synth {

void add_bool_attr(trace::TraceNode& node, const std::string& name, bool value);
void add_bool_list_attr(trace::TraceNode& node, const std::string& name,
                        const std::vector<bool>& values);
void add_int64_attr(trace::TraceNode& node, const std::string& name, int64_t value);
void add_int32_attr(trace::TraceNode& node, const std::string& name, int32_t value);
void add_string_attr(trace::TraceNode& node, const std::string& name, const std::string& value);

// Resets `node` to a fresh node of this id, type and name, with is_cpu_op = false written (as the
// upstream generators do).
void start_node(trace::TraceNode& node, uint64_t id, trace::NodeType type, const std::string& name);
void make_collective(trace::TraceNode& node, trace::CollectiveType type, uint64_t bytes,
                     const std::optional<std::string>& pg_name);
void make_send(trace::TraceNode& node, int32_t self, int32_t peer, uint64_t bytes, int32_t tag);
void make_recv(trace::TraceNode& node, int32_t self, int32_t peer, uint64_t bytes, int32_t tag);

}  // namespace etwire::synth
