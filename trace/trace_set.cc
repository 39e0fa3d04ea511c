#include "trace/trace_set.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <numeric>

#include "trace/trace_error.h"

namespace etwire::trace {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kExtensions[] = {".et", ".et.gz", ".json"};

// Splits "name.<rank><ext>" into ("name", rank) for the rank-file extensions; plain decimal ranks
// only (no sign, no zero padding), as trace producers write them.
std::optional<std::pair<std::string, int32_t>> split_rank_file(const std::string& filename) {
  for (std::string_view ext : kExtensions) {
    if (filename.size() <= ext.size() ||
        filename.compare(filename.size() - ext.size(), ext.size(), ext) != 0) {
      continue;
    }
    std::string stem = filename.substr(0, filename.size() - ext.size());
    size_t dot = stem.rfind('.');
    if (dot == std::string::npos || dot + 1 == stem.size()) continue;
    std::string digits = stem.substr(dot + 1);
    if (digits.size() > 1 && digits[0] == '0') continue;
    int32_t rank = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
    if (ec != std::errc() || end != digits.data() + digits.size()) continue;
    return std::make_pair(stem.substr(0, dot), rank);
  }
  return std::nullopt;
}

[[noreturn]] void fail(const std::string& what, const std::string& problem) {
  throw TraceError({what, {}, {}}, problem);
}

// What `path` is, following symlinks; not_found when it (or a symlink's target) does not exist.
// Anything else that stops the lookup (a symlink loop, a directory without search permission)
// is an error naming `what`, since the user named that path, or a file in it, as a trace.
fs::file_type readable_type(const fs::path& path, const std::string& what) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec && status.type() != fs::file_type::not_found) {
    fail(what, path.string() == what
                   ? fmt::format("not readable: {}", ec.message())
                   : fmt::format("{} is not readable: {}", path.string(), ec.message()));
  }
  return status.type();
}

}  // namespace

TraceSet TraceSet::discover(const std::string& spec, std::optional<int32_t> expected_world_size) {
  TraceSet set;
  set.spec_ = spec;
  std::error_code ec;
  const fs::file_type type = readable_type(spec, spec);
  if (type == fs::file_type::regular) {
    set.files_.push_back({0, spec});
  } else {
    // A directory holding one set, or a prefix "dir/name" of "dir/name.<rank>.et".
    fs::path dir;
    std::optional<std::string> wanted_stem;
    if (type == fs::file_type::directory) {
      dir = spec;
    } else {
      fs::path prefix(spec);
      dir = prefix.has_parent_path() ? prefix.parent_path() : fs::path(".");
      wanted_stem = prefix.filename().string();
      if (readable_type(dir, spec) != fs::file_type::directory) {
        fail(spec, "no such file or directory");
      }
    }
    std::map<std::string, std::map<int32_t, std::string>> sets;  // stem -> rank -> path
    // increment(ec), not ++: an entry that cannot be read is reported below, never thrown.
    for (fs::directory_iterator entries(dir, ec), end; !ec && entries != end;
         entries.increment(ec)) {
      const fs::directory_entry& entry = *entries;
      // Only names of rank files are looked at: anything else in the directory, a symlink loop
      // included, is none of the trace set's business.
      auto split = split_rank_file(entry.path().filename().string());
      if (!split || (wanted_stem && split->first != *wanted_stem)) continue;
      if (readable_type(entry.path(), entry.path().string()) != fs::file_type::regular) continue;
      auto& ranks = sets[split->first];
      auto [it, inserted] = ranks.emplace(split->second, entry.path().string());
      if (!inserted) {
        fail(spec, fmt::format("rank {} has two files: {} and {}", split->second, it->second,
                               entry.path().string()));
      }
    }
    if (ec) fail(spec, fmt::format("cannot list directory {}: {}", dir.string(), ec.message()));
    if (sets.empty()) {
      fail(spec, wanted_stem ? "no rank files named " + spec + ".<rank>.et (or .et.gz, .json)"
                             : "directory holds no rank files named <prefix>.<rank>.et");
    }
    if (sets.size() > 1) {
      std::vector<std::string> stems;
      for (const auto& [stem, ranks] : sets) stems.push_back(stem);
      fail(spec, fmt::format("directory holds several trace sets ({}); name one by its prefix",
                             fmt::join(stems, ", ")));
    }
    const auto& ranks = sets.begin()->second;
    set.spec_ = wanted_stem ? spec : (dir / sets.begin()->first).string();
    int32_t expected = 0;
    for (const auto& [rank, path] : ranks) {
      if (rank != expected) {
        fail(set.spec_,
             fmt::format("rank file {} is missing (found ranks {}..{}, {} files): every "
                         "rank from 0 to the highest needs its file",
                         expected, ranks.begin()->first, ranks.rbegin()->first, ranks.size()));
      }
      set.files_.push_back({rank, path});
      ++expected;
    }
  }
  if (expected_world_size && *expected_world_size != set.world_size()) {
    fail(set.spec_, fmt::format("expected {} ranks but found {} rank files", *expected_world_size,
                                set.world_size()));
  }
  return set;
}

std::unique_ptr<NodeSource> TraceSet::open(int32_t rank) const {
  return open_node_source(files_.at(static_cast<size_t>(rank)).path);
}

void TraceSet::set_comm_groups(CommGroups groups) {
  for (const auto& [id, ranks] : groups.groups()) {
    for (int32_t rank : ranks) {
      if (rank >= world_size()) {
        fail(groups.origin(),
             fmt::format("group {} lists rank {}, but the trace set {} has ranks 0..{} only "
                         "(are rank files missing?)",
                         id, rank, spec_, world_size() - 1));
      }
    }
  }
  groups_ = std::move(groups);
}

TraceSet::ProcessGroup TraceSet::resolve_group(const TraceNode& node,
                                               const std::string& file) const {
  auto ref = parse_pg_name(node.comm.pg_name.view());
  TraceLocation where{file, node.record_index, node.id};
  if (!ref) {
    throw TraceError(where, fmt::format("pg_name \"{}\" does not start with a group number",
                                        *node.comm.pg_name));
  }
  if (ref->explicit_id) {
    if (const auto* members = groups_.find(ref->id)) return {ref->id, *members};
    // "0" and "0.0" name group 0; without a definition in the file it is the all-ranks group.
    if (ref->id != kDefaultGroupId) {
      throw TraceError(where, groups_.empty()
                                  ? fmt::format("pg_name \"{}\" names process group {}, but no "
                                                "comm-group file was given",
                                                *node.comm.pg_name, ref->id)
                                  : fmt::format("pg_name \"{}\" names process group {}, which {} "
                                                "does not define",
                                                *node.comm.pg_name, ref->id, groups_.origin()));
    }
  }
  ProcessGroup all{kDefaultGroupId, std::vector<int32_t>(static_cast<size_t>(world_size()))};
  std::iota(all.members.begin(), all.members.end(), 0);
  return all;
}

NodeGroup TraceSet::node_group(const TraceNode& node, const std::string& file) const {
  ProcessGroup group = resolve_group(node, file);
  const auto ref = parse_pg_name(node.comm.pg_name.view());
  const bool from_file = ref && ref->explicit_id && groups_.find(ref->id) != nullptr;
  return {from_file ? group.id : kAllRanksGroup, std::move(group.members)};
}

}  // namespace etwire::trace
