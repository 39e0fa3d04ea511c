#include "runner/stop_signals.h"

#include <csignal>

namespace etwire::runner {

namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

enum Mode : int {
  kUndecided,  // before the command is known: signals are kept for whichever it is
  kKeep,       // a command that ends gracefully reads stop_requested()
  kEnd,        // any other command ends as by default
};

// Lock-free atomics, so that the handler may use them (async-signal-safe).
std::atomic<bool> requested{false};
std::atomic<int> first_signal{0};
std::atomic<int> mode{kUndecided};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

// Ends the process as `signal` would have without a handler: killed by it, as its parent sees.
void end_by(int signal) {
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

extern "C" void on_stop_signal(int signal) {
  int none = 0;
  first_signal.compare_exchange_strong(none, signal, std::memory_order_relaxed);
  requested.store(true, std::memory_order_relaxed);
  // Blocked while this handler runs, the raised signal ends the process as it returns.
  if (mode.load(std::memory_order_relaxed) == kEnd) end_by(signal);
}

}  // namespace

void install_stop_handlers() {
  for (const int signal : kStopSignals) {
    struct sigaction inherited {};
    if (sigaction(signal, nullptr, &inherited) != 0 || inherited.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    // Interrupted system calls resume: a stop is read from the flag, not from an EINTR.
    action.sa_flags = SA_RESTART;
    sigaction(signal, &action, nullptr);
  }
}

void keep_stop_requests() {
  mode.store(kKeep, std::memory_order_relaxed);
}

void end_on_stop_signals() {
  mode.store(kEnd, std::memory_order_relaxed);
  if (const int signal = first_signal.load(std::memory_order_relaxed); signal != 0) end_by(signal);
}

std::atomic<bool>& stop_requested() {
  return requested;
}

}  // namespace etwire::runner
