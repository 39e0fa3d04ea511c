#include "config/protocol.h"

namespace etwire::config {

ProtocolLine protocol_line(Protocol p) {
  switch (p) {
    case Protocol::kLl:
      return {16, 8};  // two 4-byte data words, each beside its 4-byte flag
    case Protocol::kLl128:
      return {128, 120};  // fifteen 8-byte data words and one flag word
    case Protocol::kSimple:
      break;
  }
  return {1, 1};
}

uint64_t protocol_wire_bytes(Protocol p, uint64_t data) {
  const ProtocolLine line = protocol_line(p);
  return (data + line.data - 1) / line.data * line.bytes;
}

uint64_t ProtocolConfig::message_data_bytes(Protocol p) const {
  const ProtocolLine line = protocol_line(p);
  return message_wire_bytes(p) / line.bytes * line.data;
}

}  // namespace etwire::config
