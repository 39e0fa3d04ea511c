// Process exit codes, shared by every subcommand and documented in the README.
#pragma once

namespace etwire::runner {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;          // internal error or an I/O failure writing output
inline constexpr int kExitBadInput = 2;         // bad trace, config or command-line input
inline constexpr int kExitStuck = 3;            // a run stopped making progress (watchdog)
inline constexpr int kExitBeyondTolerance = 4;  // compare: a delta beyond --tolerance
inline constexpr int kExitInterrupted = 130;  // SIGINT/SIGTERM/SIGHUP stopped a run (128 + SIGINT)

}  // namespace etwire::runner
