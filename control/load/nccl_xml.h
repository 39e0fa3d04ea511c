// What the readers of NCCL's XML dumps share (the graph of NCCL_GRAPH_DUMP_FILE, the topology of
// NCCL_TOPO_DUMP_FILE): the file read with a bound, parsed by pugixml, errors naming the file and
// the line, and NCCL's device numbers.
#pragma once

#include <pugixml.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

#include "control/load/nccl_dump_error.h"

namespace etwire::control {

// A dump's text; throws NcclDumpError when it cannot be read or is larger than `max_bytes`.
std::string read_nccl_dump(const std::string& path, uint64_t max_bytes, const char* what);

class NcclXmlReader {
 public:
  // `name` stands for the file in messages. Throws NcclDumpError when the XML does not parse.
  NcclXmlReader(std::string name, std::string text);

  const pugi::xml_document& document() const { return doc_; }

  // The element's `dev` attribute: decimal or 0x-hexadecimal, NCCL's system id above bit 56
  // dropped, below `limit`.
  uint32_t device(pugi::xml_node node, uint32_t limit) const;

  [[noreturn]] void fail(pugi::xml_node node, const std::string& message) const;
  [[noreturn]] void fail(size_t offset, const std::string& message) const;

 private:
  std::string name_;
  std::string text_;
  pugi::xml_document doc_;
};

}  // namespace etwire::control
