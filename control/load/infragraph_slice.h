// A step of an InfraGraph endpoint: a name and the slice of its copies it takes, in Python's slice
// notation as InfraGraph writes it ("port[0:4]", "host[2]", "xpu[0:8:2]", "port[:4]"; none: all of
// them), and the copies a slice picks out of those there are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwire::control::infragraph {

struct Step {
  std::string name;
  bool single = false;  // "[3]": that one
  std::optional<int64_t> start;
  std::optional<int64_t> stop;
  std::optional<int64_t> stride;
};

// nullopt when the text is not a name with an optional slice.
std::optional<Step> parse_step(std::string_view text);

// The copies `step` takes of `count` into `out`; "" when it takes any, else why not.
std::string pick(const Step& step, uint32_t count, std::vector<uint32_t>& out);

}  // namespace etwire::control::infragraph
