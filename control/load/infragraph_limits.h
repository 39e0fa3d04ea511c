// The caps on an InfraGraph file: what it may hold, and what its edges may expand to. A file of
// a few hundred bytes can describe a huge graph (one many2many edge between two instances of a
// million copies is a trillion cables), so each count is checked before the work and memory it
// would cost, and refused at its place in the file. The caps are far above any fabric the twin
// runs (its largest measured runs have a few thousand ports; a leaf holds at most 4096) and keep
// the expansion under a hundred megabytes. Internal to control/ (infragraph_graph.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "control/load/map_reader.h"

namespace etwire::control::infragraph {

// Copies of an instance, or of a component in its device.
inline constexpr int64_t kMaxCount = int64_t{1} << 20;
// Devices, links and instances each, and the components of one device.
inline constexpr size_t kMaxElements = 65'536;
// A name of a device, component, link or instance: names are identifiers, and each cable's ends
// repeat them, so a long one multiplies by every copy.
inline constexpr size_t kMaxNameBytes = 256;
// An endpoint's instance or component text, slices and composed steps included.
inline constexpr size_t kMaxEndpointBytes = 1024;
// Cables in the whole graph, after expansion: a fabric of more than 30,000 host NICs, read in
// half a second (a few under the fuzz build's sanitizers) and under a hundred megabytes.
inline constexpr size_t kMaxCables = size_t{1} << 16;
// Ends that all the edges expand into together (a one2one edge of a million ends on one side
// and one on the other makes one cable), and the bytes of their names.
inline constexpr size_t kMaxEnds = size_t{1} << 18;
inline constexpr size_t kMaxEndNameBytes = size_t{1} << 24;

// `key`'s text into `out`, refused (at the key) when it is longer than `cap` bytes.
bool read_name(MapReader& map, const char* key, std::string& out, size_t cap = kMaxNameBytes);

// The items of list `key`, up to `cap`; more is an error at the first item past it.
std::vector<ListItem> capped_list(MapReader& map, const char* key, size_t cap = kMaxElements);

// a * b, or `cap` when that is more (or more than 64 bits hold).
inline size_t capped_product(size_t a, size_t b, size_t cap) {
  return b != 0 && a > cap / b ? cap : (a * b < cap ? a * b : cap);
}

}  // namespace etwire::control::infragraph
