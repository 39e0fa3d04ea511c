// DPDK keeps a process's runtime files (its configuration, memory maps and multi-process socket)
// in a directory named by its --file-prefix under /var/run/dpdk, and leaves it behind at exit.
// A prefix of the process's own (etwire-PID, one per emulator process) is a new directory each
// run: a lab host running split runs for months would gather thousands of them.
#pragma once

#include <string>

namespace etwire::nic::dpdk {

// Removes the EAL's runtime directory and the files in it when the process exits normally, if
// the directory is named `prefix` (the --file-prefix the EAL was started with); nothing else is
// ever removed. Call after the EAL started, only for a prefix no other process shares.
void remove_runtime_dir_at_exit(const std::string& prefix);

}  // namespace etwire::nic::dpdk
