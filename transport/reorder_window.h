// What an out-of-order responder holds of the PSNs ahead of the next one it expects
// (transport.receiver: out-of-order): which have been placed, the message ends among them, and
// how far it has reported the missing ones lost. A ring of bits over `window` PSNs, sized when the
// responder opens, so placing a packet allocates nothing (message ends aside, which are few: one
// per message in the window).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace etwire::transport {

class ReorderWindow {
 public:
  // A message's last packet placed ahead of the expected PSN: what its delivery needs.
  struct MessageEnd {
    uint64_t psn = 0;
    uint32_t immediate = 0;
  };

  // The bits round up to whole words; the window stays what was asked.
  explicit ReorderWindow(uint32_t window)
      : bits_((window + 63) / 64, 0), reported_(bits_.size(), 0), window_(window) {}

  // Whether `psn` (at or after `expected`) falls where the window can place it.
  bool reaches(uint64_t psn, uint64_t expected) const { return psn - expected < window_; }
  bool placed(uint64_t psn) const { return (bits_[word(psn)] >> (psn & 63)) & 1; }
  void place(uint64_t psn) { bits_[word(psn)] |= uint64_t{1} << (psn & 63); }
  // Takes `psn` out if it was placed (the expected PSN moving past it): whether it was.
  bool take(uint64_t psn) {
    uint64_t& bits = bits_[word(psn)];
    const uint64_t bit = uint64_t{1} << (psn & 63);
    if ((bits & bit) == 0) return false;
    bits &= ~bit;
    reported_[word(psn)] &= ~bit;
    return true;
  }
  // A PSN reported lost ahead of the loss_after rule (its headers arrived trimmed): that rule
  // passes it over, so it is not asked for twice, until it arrives (placed and taken, or
  // forget_report when it comes in order).
  void mark_reported(uint64_t psn) { reported_[word(psn)] |= uint64_t{1} << (psn & 63); }
  bool reported(uint64_t psn) const { return (reported_[word(psn)] >> (psn & 63)) & 1; }
  void forget_report(uint64_t psn) { reported_[word(psn)] &= ~(uint64_t{1} << (psn & 63)); }

  // Message ends, in the order they arrived (not necessarily their PSNs').
  std::vector<MessageEnd>& ends() { return ends_; }

  // PSNs below this were reported lost, or had arrived, when it last looked.
  uint64_t reported_through = 0;

 private:
  size_t word(uint64_t psn) const { return (psn / 64) % bits_.size(); }

  std::vector<uint64_t> bits_;
  std::vector<uint64_t> reported_;
  uint64_t window_;
  std::vector<MessageEnd> ends_;
};

}  // namespace etwire::transport
