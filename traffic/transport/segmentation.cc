#include "traffic/transport/segmentation.h"

#include "nic/packet.h"

namespace etwire::transport {

uint8_t opcode_for(control::RdmaOp op, uint32_t index, uint32_t packets) {
  namespace code = nic::opcode;
  const bool first = index == 0;
  const bool last = index + 1 == packets;
  switch (op) {
    case control::RdmaOp::kWrite:
      if (first && last) return code::kWriteOnly;
      if (first) return code::kWriteFirst;
      return last ? code::kWriteLast : code::kWriteMiddle;
    case control::RdmaOp::kWriteWithImmediate:
      if (first && last) return code::kWriteOnlyWithImmediate;
      if (first) return code::kWriteFirst;
      return last ? code::kWriteLastWithImmediate : code::kWriteMiddle;
    case control::RdmaOp::kSend:
      if (first && last) return code::kSendOnly;
      if (first) return code::kSendFirst;
      return last ? code::kSendLast : code::kSendMiddle;
  }
  return code::kWriteMiddle;
}

}  // namespace etwire::transport
