#include "nic/verbs/libibverbs_api.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "nic/verbs/rdma_devices.h"
#include "nic/verbs/rnic_counters.h"

namespace etwire::nic::verbs {

namespace {

std::string error_text(int error) {
  return std::strerror(error);
}

class LibibverbsCq final : public VerbsCq {
 public:
  LibibverbsCq(ibv_cq* cq, int entries) : cq_(cq), entries_(entries) {}
  ~LibibverbsCq() override { ibv_destroy_cq(cq_); }
  int poll(int entries, ibv_wc* wc) override { return ibv_poll_cq(cq_, entries, wc); }
  int capacity() const override { return entries_; }
  ibv_cq* get() { return cq_; }

 private:
  ibv_cq* cq_;
  int entries_;
};

class LibibverbsQp final : public VerbsQp {
 public:
  explicit LibibverbsQp(ibv_qp* qp) : qp_(qp) {}
  ~LibibverbsQp() override { ibv_destroy_qp(qp_); }
  uint32_t qp_num() const override { return qp_->qp_num; }
  ibv_qp_state state() const override { return qp_->state; }
  int modify(ibv_qp_attr& attr, int mask) override { return ibv_modify_qp(qp_, &attr, mask); }
  int set_rate_limit(uint32_t kbps) override {
    ibv_qp_rate_limit_attr attr{};
    attr.rate_limit = kbps;
    return ibv_modify_qp_rate_limit(qp_, &attr);
  }
  int post_send(ibv_send_wr* wr, ibv_send_wr** bad) override { return ibv_post_send(qp_, wr, bad); }
  int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad) override { return ibv_post_recv(qp_, wr, bad); }

 private:
  ibv_qp* qp_;
};

class LibibverbsDevice final : public VerbsDevice {
 public:
  LibibverbsDevice(std::string name, ibv_context* context, std::string sysfs_root)
      : name_(std::move(name)), context_(context), sysfs_root_(std::move(sysfs_root)) {
    pd_ = ibv_alloc_pd(context_);
    if (pd_ == nullptr) {
      const int error = errno;
      ibv_close_device(context_);
      throw VerbsError(fmt::format("{}: ibv_alloc_pd failed: {}", name_, error_text(error)), error);
    }
  }
  ~LibibverbsDevice() override {
    for (ibv_mr* mr : regions_) ibv_dereg_mr(mr);
    ibv_dealloc_pd(pd_);
    ibv_close_device(context_);
  }

  const std::string& name() const override { return name_; }
  int query_port(uint8_t port, ibv_port_attr& attr) override {
    return ibv_query_port(context_, port, &attr);
  }
  int query_gid(uint8_t port, uint32_t index, ibv_gid_entry& entry) override {
    return ibv_query_gid_ex(context_, port, index, &entry, 0);
  }
  MemoryRegion register_memory(void* address, size_t length, int access) override {
    ibv_mr* mr = ibv_reg_mr(pd_, address, length, access);
    if (mr == nullptr) {
      const int error = errno;
      throw VerbsError(
          fmt::format("{}: ibv_reg_mr of {} bytes failed: {}", name_, length, error_text(error)),
          error);
    }
    regions_.push_back(mr);
    return {reinterpret_cast<uint64_t>(mr->addr), mr->length, mr->lkey, mr->rkey};
  }
  std::unique_ptr<VerbsCq> create_cq(int entries) override {
    ibv_cq* cq = ibv_create_cq(context_, entries, nullptr, nullptr, 0);
    if (cq == nullptr) {
      const int error = errno;
      throw VerbsError(fmt::format("{}: ibv_create_cq of {} entries failed: {}", name_, entries,
                                   error_text(error)),
                       error);
    }
    return std::make_unique<LibibverbsCq>(cq, cq->cqe);
  }
  std::unique_ptr<VerbsQp> create_qp(VerbsCq& send_cq, VerbsCq& recv_cq,
                                     ibv_qp_cap& caps) override {
    ibv_qp_init_attr init{};
    init.send_cq = static_cast<LibibverbsCq&>(send_cq).get();
    init.recv_cq = static_cast<LibibverbsCq&>(recv_cq).get();
    init.cap = caps;
    init.qp_type = IBV_QPT_RC;
    ibv_qp* qp = ibv_create_qp(pd_, &init);
    if (qp == nullptr) {
      const int error = errno;
      throw VerbsError(fmt::format("{}: ibv_create_qp (RC, {} send and {} receive work requests) "
                                   "failed: {}",
                                   name_, caps.max_send_wr, caps.max_recv_wr, error_text(error)),
                       error);
    }
    caps = init.cap;
    return std::make_unique<LibibverbsQp>(qp);
  }
  std::vector<std::pair<std::string, uint64_t>> read_counters(uint8_t port) override {
    auto& reader = readers_[port];
    if (!reader) reader = std::make_unique<RnicCounterReader>(sysfs_root_, name_, port);
    return reader->read();
  }

 private:
  std::string name_;
  ibv_context* context_;
  ibv_pd* pd_ = nullptr;
  std::vector<ibv_mr*> regions_;
  std::string sysfs_root_;
  std::map<uint8_t, std::unique_ptr<RnicCounterReader>> readers_;
};

}  // namespace

std::unique_ptr<VerbsDevice> LibibverbsProvider::open(const std::string& name) {
  const DeviceList list;
  std::string names;
  for (int d = 0; d < list.size(); ++d) {
    const std::string device = list.name(d);
    if (device != name) {
      names += (names.empty() ? "" : ", ") + device;
      continue;
    }
    ibv_context* context = ibv_open_device(list[d]);
    if (context == nullptr) {
      const int error = errno;
      throw VerbsError(fmt::format("{}: ibv_open_device failed: {}", name, error_text(error)),
                       error);
    }
    return std::make_unique<LibibverbsDevice>(name, context, sysfs_root_);
  }
  throw NoRdmaDevice(
      fmt::format("no RDMA device is named \"{}\"; this machine has {}", name, names));
}

}  // namespace etwire::nic::verbs
