// Which receives have written into a slot of a member's buffer (a chunk, or a chunk of one block),
// so that a later send of bytes from that slot can depend on every receive that contributed to
// them. A reduced range may have been written by several receives that complete in any order; the
// send must wait for all of them, not only the latest.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collectives/program_builder.h"

namespace etwire::collectives {

class TransferLedger {
 public:
  void reset(size_t slots) {
    head_.assign(slots, kNone);
    entries_.clear();
  }
  void add(size_t slot, const Transfer& transfer) {
    if (transfer.pieces == 0) return;
    entries_.push_back({transfer, head_[slot]});
    head_[slot] = static_cast<uint32_t>(entries_.size() - 1);
  }
  // Every transfer added to `slot`; valid until the next call.
  std::span<const Transfer> writers(size_t slot) {
    scratch_.clear();
    for (uint32_t i = head_[slot]; i != kNone; i = entries_[i].next) {
      scratch_.push_back(entries_[i].transfer);
    }
    return scratch_;
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Entry {
    Transfer transfer;
    uint32_t next;
  };
  std::vector<uint32_t> head_;
  std::vector<Entry> entries_;
  std::vector<Transfer> scratch_;
};

}  // namespace etwire::collectives
