// A results directory held by the run (or sweep) that writes it: two runs given the same --out
// would otherwise both write flows.csv and leave the lines of one spliced into the other's. The
// directory itself is locked (flock on a descriptor of it): nothing is added to it, and the lock
// goes with the process, however it ends.
#pragma once

#include <filesystem>
#include <string>

namespace etwire::runner {

class ResultsLock {
 public:
  ResultsLock() = default;
  ~ResultsLock();
  ResultsLock(const ResultsLock&) = delete;
  ResultsLock& operator=(const ResultsLock&) = delete;

  // Takes `dir` (which exists) for this process; false, with `why` set, when another process
  // holds it or it cannot be opened.
  bool take(const std::filesystem::path& dir, std::string& why);
  void release();

 private:
  int fd_ = -1;
};

// Creates `dir` (and its parents) and takes it for this process. Returns kExitOk, or, after saying
// why on stderr, kExitFailure when it cannot be created and kExitBadInput when another run holds
// it.
int hold_results_directory(const std::filesystem::path& dir, ResultsLock& lock);

}  // namespace etwire::runner
