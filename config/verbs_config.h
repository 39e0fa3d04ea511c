// `verbs:` — run-wide settings of the verbs backend: which RNIC serves it, and how messages
// become work requests on its queue pairs. Per-port settings (device, port, GID) are in
// port_config.h.
#pragma once

#include <cstdint>
#include <string_view>

namespace etwire::config {

enum class RnicKind : uint8_t {
  kHardware,  // the machine's RDMA devices, through libibverbs
  kSoftware,  // etwire's software RNIC: the same calls, served over the fabric twin (CI, laptops)
};
std::string_view rnic_kind_name(RnicKind kind);  // "hardware", "software"

struct VerbsConfig {
  RnicKind rnic = RnicKind::kHardware;
  // A message larger than this is posted as several work requests of at most this many bytes
  // (the last one WITH IMMEDIATE for write-with-imm); each device registers one buffer this
  // large, which every work request reads from and writes into.
  uint64_t max_message = 1 << 20;
  // Work requests a queue pair keeps outstanding (its send queue depth); receive queues hold as
  // many receives, posted ahead.
  uint32_t queue_depth = 128;
  uint32_t start_psn = 0;  // first PSN of every queue pair's send queue, and its peer's receive
  // RNR NAK retries before a send fails with IBV_WC_RNR_RETRY_EXC_ERR (7: retry forever).
  uint8_t rnr_retry = 7;
  bool present = false;  // the file has a verbs: section
};

}  // namespace etwire::config
