// Work done on the EAL's interrupt thread, where DPDK drivers handle their devices' events.
#pragma once

#include <cstdint>
#include <functional>

namespace etwire::nic::dpdk {

// Whether `device` is a net_memif device: its driver tears its connection down on the interrupt
// thread when the peer leaves (see stop_device).
bool is_memif_device(uint16_t device);

// Runs `work` on the EAL interrupt thread and returns when it has run, so that it never runs at
// the same time as a driver's interrupt callback. Needs the EAL running. Should the interrupt
// thread not take it within 10 s, `work` runs on the calling thread instead.
void run_on_interrupt_thread(const std::function<void()>& work);

}  // namespace etwire::nic::dpdk
