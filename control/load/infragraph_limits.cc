#include "control/load/infragraph_limits.h"

#include <fmt/format.h>

namespace etwire::control::infragraph {

bool read_name(MapReader& map, const char* key, std::string& out, size_t cap) {
  if (!map.text(key, out)) return false;
  if (out.size() <= cap) return true;
  map.context().error(Problem::kOutOfRange, map.get(key), map.key_path(key),
                      fmt::format("a text of {} bytes: {} takes at most {}", out.size(),
                                  cap == kMaxNameBytes ? "a name" : "an endpoint", cap));
  out.clear();
  return false;
}

std::vector<ListItem> capped_list(MapReader& map, const char* key, size_t cap) {
  std::vector<ListItem> items = map.list(key);
  if (items.size() > cap) {
    map.context().error(Problem::kOutOfRange, items[cap].node, items[cap].path,
                        fmt::format("{} holds {} entries: at most {} are read", map.key_path(key),
                                    items.size(), cap));
    items.resize(cap);
  }
  return items;
}

}  // namespace etwire::control::infragraph
