// How the emulator processes of one run agree on what to do next, over MPI: each says its exit
// code (0: ready, go on), and every process learns the same answer, so all go on or all stop
// together. And steps that must run process by process in a fixed order (devices whose servers
// must listen before their clients connect). Outside MPI a session of one agrees with itself.
#pragma once

#include <functional>
#include <vector>

#include "cluster/session.h"

namespace etwire::cluster {

// Every process's `code`, in process (MPI rank) order. Collective.
std::vector<int> gather_exit_codes(const Session& session, int code);

// The first nonzero code in process order, or 0 when every process said 0. Collective.
int agree_on_exit_code(const Session& session, int code);

// Process 0's code, on every process: the run's code when process 0 reports it. Collective.
int exit_code_of_process_zero(const Session& session, int code);

// Runs `step` on this process in its `turn` of `turns` (0 first), every process waiting for the
// others at the end of each turn. Collective.
void in_turns(const Session& session, int turn, int turns, const std::function<void()>& step);

}  // namespace etwire::cluster
