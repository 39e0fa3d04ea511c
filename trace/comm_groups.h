// Process-group membership from a comm-group JSON file ({"<id>": [global ranks...]}), and the
// rules that turn a node's pg_name into a group.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwire::trace {

// Group id 0 means "all ranks of the world" (the default group) unless the comm-group file
// defines a group 0, whose definition then wins.
inline constexpr int64_t kDefaultGroupId = 0;

// The group id a pg_name names: absent or "" -> the implicit all-ranks group; otherwise the
// leading decimal integer ("1.0" -> 1; "0" and "0.0" -> 0, looked up in the file and all ranks
// only when the file does not define it). nullopt when the text does not start with a number.
struct GroupRef {
  int64_t id = kDefaultGroupId;
  // True when the name explicitly named a group (so id 0 is looked up in the file), false for
  // the implicit all-ranks group.
  bool explicit_id = false;
};
std::optional<GroupRef> parse_pg_name(std::optional<std::string_view> pg_name);

class CommGroups {
 public:
  CommGroups() = default;
  // Throws TraceError naming the file (and the group key) on unreadable JSON, a non-integer key,
  // a non-array value, a negative or non-integer rank, or a rank listed twice in one group.
  static CommGroups load(const std::string& path);
  static CommGroups from_json_text(const std::string& text, const std::string& origin);

  bool empty() const { return groups_.empty(); }
  const std::map<int64_t, std::vector<int32_t>>& groups() const { return groups_; }
  // Ranks of an explicitly named group, in file order; nullopt if the file does not define it.
  const std::vector<int32_t>* find(int64_t id) const;
  const std::string& origin() const { return origin_; }

 private:
  std::map<int64_t, std::vector<int32_t>> groups_;
  std::string origin_;
};

}  // namespace etwire::trace
