// A trace set: one file per rank, named <prefix>.<rank>.et (or .et.gz / .json), plus an optional
// comm-group file. Discovers the files, infers the world size and resolves process groups.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trace/comm_groups.h"
#include "trace/node.h"
#include "trace/node_source.h"

namespace etwire::trace {

struct RankFile {
  int32_t rank = 0;
  std::string path;
};

// Group key of the implicit all-ranks group (an absent or empty pg_name, or "0" / "0.0" when the
// comm-group file does not define group 0). Kept apart from an explicit group 0 that the file
// defines with other members.
inline constexpr int64_t kAllRanksGroup = -1;

// The process group of a collective node: its key (a comm-group id, or kAllRanksGroup) and its
// members in group order.
struct NodeGroup {
  int64_t key = kAllRanksGroup;
  std::vector<int32_t> members;
};

class TraceSet {
 public:
  // `spec` is a prefix ("dir/trace" for dir/trace.0.et ...) or a single file (a one-rank set,
  // rank taken from the ".<rank>." in its name, else 0). Throws TraceError when nothing matches,
  // when rank numbers have gaps ("rank 2 is missing"), or when expected_world_size is given and
  // differs from what was found.
  static TraceSet discover(const std::string& spec,
                           std::optional<int32_t> expected_world_size = std::nullopt);

  const std::string& spec() const { return spec_; }
  int32_t world_size() const { return static_cast<int32_t>(files_.size()); }
  const std::vector<RankFile>& files() const { return files_; }
  std::unique_ptr<NodeSource> open(int32_t rank) const;

  // Attaches a comm-group file. Throws TraceError if a group names a rank outside the world
  // (which usually means rank files are missing).
  void set_comm_groups(CommGroups groups);
  const CommGroups& comm_groups() const { return groups_; }

  // The group a node's pg_name names: its id (0 = all ranks unless the file defines group 0) and
  // member ranks (global, in group order). Throws TraceError (located at the node) when the name
  // is not a number or names a group other than 0 that the comm-group file does not define.
  struct ProcessGroup {
    int64_t id = kDefaultGroupId;
    std::vector<int32_t> members;
  };
  ProcessGroup resolve_group(const TraceNode& node, const std::string& file) const;
  // The group as a replay keys it: like resolve_group, except that "0" or "0.0" names the file's
  // group 0 only when the comm-group file defines it; otherwise it is, like an absent name, the
  // implicit all-ranks group (kAllRanksGroup), kept apart from a file-defined group 0 with other
  // members.
  NodeGroup node_group(const TraceNode& node, const std::string& file) const;

 private:
  std::string spec_;
  std::vector<RankFile> files_;
  CommGroups groups_;
};

}  // namespace etwire::trace
