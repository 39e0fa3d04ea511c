// Work done on the EAL's interrupt thread, where DPDK drivers handle their devices' events.
#pragma once

#include <functional>

namespace etwire::nic::dpdk {

// Runs `work` on the EAL interrupt thread and returns when it has run, so that it never runs at
// the same time as a driver's interrupt callback. Needs the EAL running. Should the interrupt
// thread not take it within 10 s, `work` runs on the calling thread instead.
void run_on_interrupt_thread(const std::function<void()>& work);

}  // namespace etwire::nic::dpdk
