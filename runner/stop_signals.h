// SIGINT, SIGTERM and SIGHUP. `etwire run` takes each as a request to stop: the run ends at its
// next event and writes the results so far (exit 130). The handlers are installed before main,
// ahead of every library's static initialisers (cli/main.cc), so that a signal that comes while
// the process starts, the configuration loads or the ports are set up is kept for the run instead
// of killing the process with nothing written. Every other command ends on these signals as a
// process does by default.
//
// A signal the process inherits as ignored stays ignored: POSIX shells start a background job of
// a non-interactive shell (`etwire run ... &` in a script) with SIGINT ignored, and nohup ignores
// SIGHUP, each on purpose. SIGTERM still stops such a run.
#pragma once

#include <atomic>

namespace etwire::runner {

// Installs the handlers; the first thing the process does once it is loaded. Only touches
// constant-initialised state, so it may run before static initialisation.
void install_stop_handlers();

// For a command that ends gracefully (run): from now on the signals only set stop_requested().
void keep_stop_requests();
// For every other command: from now on the signals end the process as by default, and one that
// came already does so now.
void end_on_stop_signals();

// Set once one of the signals came; RunOptions::stop points here.
std::atomic<bool>& stop_requested();

}  // namespace etwire::runner
