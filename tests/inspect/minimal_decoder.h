// A deliberately small, independent reading of .et files for cross-checking `inspect`: it walks
// the varint framing and picks out only node type, comm_type and comm_size/tensor_size, sharing
// no code with the project's reader.
#pragma once

#include <array>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace etwire::testing {

struct MinimalCounts {
  uint64_t nodes = 0;
  std::array<uint64_t, 8> by_type{};
  // Indexed by comm_type, only for COMM_COLL nodes that have one.
  std::array<uint64_t, 10> colls{};
  std::array<uint64_t, 10> coll_bytes{};
  uint64_t send_bytes = 0;
  uint64_t recv_bytes = 0;
  uint64_t comp_us = 0;
};

class MinimalDecoder {
 public:
  static MinimalCounts count_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    MinimalCounts counts;
    size_t pos = 0;
    bool first = true;
    while (pos < data.size()) {
      uint64_t len = varint(data, pos);
      size_t end = pos + len;
      if (end > data.size()) throw std::runtime_error("truncated record in " + path);
      if (!first) node(data, pos, end, counts);
      first = false;
      pos = end;
    }
    return counts;
  }

 private:
  static uint64_t varint(const std::vector<uint8_t>& d, size_t& pos) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = d.at(pos++);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (b < 0x80) return v;
    }
    throw std::runtime_error("bad varint");
  }

  static void skip(const std::vector<uint8_t>& d, size_t& pos, int wire) {
    if (wire == 0)
      varint(d, pos);
    else if (wire == 1)
      pos += 8;
    else if (wire == 2)
      pos += varint(d, pos);
    else if (wire == 5)
      pos += 4;
    else
      throw std::runtime_error("bad wire type");
  }

  static void node(const std::vector<uint8_t>& d, size_t pos, size_t end, MinimalCounts& c) {
    uint64_t type = 0, duration = 0;
    bool has_comm_type = false, has_size = false;
    uint64_t comm_type = 0, size = 0, tensor_size = 0;
    while (pos < end) {
      uint64_t key = varint(d, pos);
      int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
      if (field == 3 && wire == 0) {
        type = varint(d, pos);
      } else if (field == 7 && wire == 0) {
        duration = varint(d, pos);
      } else if (field == 10 && wire == 2) {
        size_t attr_end = pos + varint(d, pos);
        std::string name;
        uint64_t value = 0;
        bool has_value = false;
        while (pos < attr_end) {
          uint64_t k = varint(d, pos);
          int f = static_cast<int>(k >> 3), w = static_cast<int>(k & 7);
          if (f == 1 && w == 2) {
            uint64_t n = varint(d, pos);
            name.assign(reinterpret_cast<const char*>(&d[pos]), n);
            pos += n;
          } else if ((f == 7 || f == 9 || f == 11 || f == 13) && w == 0) {
            value = varint(d, pos);
            has_value = true;
          } else {
            skip(d, pos, w);
          }
        }
        if (has_value && name == "comm_type" && !has_comm_type) {
          comm_type = value;
          has_comm_type = true;
        } else if (has_value && name == "comm_size" && !has_size) {
          size = value;
          has_size = true;
        } else if (has_value && name == "tensor_size") {
          tensor_size = value;
        }
      } else {
        skip(d, pos, wire);
      }
    }
    ++c.nodes;
    if (type < 8) ++c.by_type[type];
    if (type == 4) c.comp_us += duration;
    if (type == 7 && has_comm_type && comm_type < 10) {
      ++c.colls[comm_type];
      c.coll_bytes[comm_type] += size;
    }
    if (type == 5) c.send_bytes += has_size ? size : tensor_size;
    if (type == 6) c.recv_bytes += has_size ? size : tensor_size;
  }
};

}  // namespace etwire::testing
