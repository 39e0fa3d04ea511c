// The narrow seam between the verbs backend and an RDMA NIC: the dozen libibverbs calls the
// backend makes, in libibverbs' own vocabulary (ibv_qp_attr, ibv_send_wr, ibv_wc, errno values).
// Two sides serve it: libibverbs itself on a real RNIC (libibverbs_api.h), and the software RNIC
// the backend runs on where there is none (dataplane/verbs/software_rnic.h). Keeping the seam this
// small is what lets CI exercise every line of the backend without hardware.
//
// Like libibverbs, calls on the data path (post, poll, modify) return 0 or an errno and never
// throw; setup calls that have nothing to return on failure (open, register, create) throw
// VerbsError with the call, the device and the library's words.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace etwire::nic::verbs {

class VerbsError : public std::runtime_error {
 public:
  VerbsError(const std::string& what, int error) : std::runtime_error(what), error_(error) {}
  int error() const { return error_; }  // the errno the call failed with

 private:
  int error_;
};

// A registered buffer: where it is, and the keys that name it locally and to peers.
struct MemoryRegion {
  uint64_t address = 0;
  uint64_t length = 0;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
};

// A completion queue (ibv_cq).
class VerbsCq {
 public:
  virtual ~VerbsCq() = default;
  // ibv_poll_cq: up to `entries` completions into `wc`; the count, or a negative value when the
  // queue is in error (overrun).
  virtual int poll(int entries, ibv_wc* wc) = 0;
  virtual int capacity() const = 0;  // entries it was created with
};

// A reliable-connected queue pair (ibv_qp of type IBV_QPT_RC).
class VerbsQp {
 public:
  virtual ~VerbsQp() = default;
  virtual uint32_t qp_num() const = 0;
  virtual ibv_qp_state state() const = 0;
  // ibv_modify_qp.
  virtual int modify(ibv_qp_attr& attr, int mask) = 0;
  // ibv_modify_qp_rate_limit: a per-QP transmit rate in kb/s; EOPNOTSUPP where the device has no
  // per-QP limiter.
  virtual int set_rate_limit(uint32_t kbps) = 0;
  // ibv_post_send / ibv_post_recv: on failure `bad` names the first work request not posted.
  virtual int post_send(ibv_send_wr* wr, ibv_send_wr** bad) = 0;
  virtual int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad) = 0;
};

// One opened device (ibv_context) with its protection domain: the backend uses one per device.
class VerbsDevice {
 public:
  virtual ~VerbsDevice() = default;
  virtual const std::string& name() const = 0;
  // ibv_query_port; 0 or an errno.
  virtual int query_port(uint8_t port, ibv_port_attr& attr) = 0;
  // ibv_query_gid_ex: the entry's GID, type and netdev; 0, or an errno (ENODATA for an empty
  // entry, EINVAL beyond the table).
  virtual int query_gid(uint8_t port, uint32_t index, ibv_gid_entry& entry) = 0;
  // ibv_reg_mr on the device's protection domain.
  virtual MemoryRegion register_memory(void* address, size_t length, int access) = 0;
  // ibv_create_cq.
  virtual std::unique_ptr<VerbsCq> create_cq(int entries) = 0;
  // ibv_create_qp of type RC on the device's protection domain; `caps` may be raised by the
  // device to what it really allocated.
  virtual std::unique_ptr<VerbsQp> create_qp(VerbsCq& send_cq, VerbsCq& recv_cq,
                                             ibv_qp_cap& caps) = 0;
  // The device port's counters now, by etwire port-counter name (rnic_counters.h), for the
  // counters it exposes; what it does not expose is absent from the list, never zero.
  virtual std::vector<std::pair<std::string, uint64_t>> read_counters(uint8_t port) = 0;
};

// Opens devices by name (ibv_get_device_list + ibv_open_device + ibv_alloc_pd).
class VerbsProvider {
 public:
  virtual ~VerbsProvider() = default;
  // Throws VerbsError (NoRdmaDevice-like words: the device list, or why there is none) when no
  // device has that name.
  virtual std::unique_ptr<VerbsDevice> open(const std::string& name) = 0;
};

// The names of things libibverbs reports as numbers, for messages.
const char* qp_state_name(ibv_qp_state state);      // "RESET", "INIT", ... "ERR"
const char* port_state_name(ibv_port_state state);  // "down", "active", ...
const char* link_layer_name(uint8_t link_layer);    // "Ethernet", "InfiniBand"
const char* gid_type_name(uint32_t type);           // "IB", "RoCE v1", "RoCE v2"
// The ibv_mtu code of a path MTU of 256 .. 4096 bytes (rdma_devices.h has the other way).
ibv_mtu path_mtu_code(uint32_t bytes);
// The enumerator's name, as in verbs.h: "IBV_WC_RETRY_EXC_ERR".
const char* work_completion_status_name(ibv_wc_status status);
// An errno as a verbs call returns it, name and words: "ENOMEM (Cannot allocate memory)".
std::string errno_text(int error);

}  // namespace etwire::nic::verbs
