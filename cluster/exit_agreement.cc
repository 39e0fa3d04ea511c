#include "cluster/exit_agreement.h"

#include <string>

namespace etwire::cluster {

std::vector<int> gather_exit_codes(const Session& session, int code) {
  if (!session.mpi()) return {code};
  std::vector<int> codes;
  for (const std::string& text : session.all_gather(std::to_string(code))) {
    codes.push_back(std::stoi(text));
  }
  return codes;
}

int agree_on_exit_code(const Session& session, int code) {
  for (int each : gather_exit_codes(session, code)) {
    if (each != 0) return each;
  }
  return 0;
}

int exit_code_of_process_zero(const Session& session, int code) {
  return gather_exit_codes(session, code).front();
}

void in_turns(const Session& session, int turn, int turns, const std::function<void()>& step) {
  if (!session.mpi()) {
    step();
    return;
  }
  for (int t = 0; t < turns; ++t) {
    if (t == turn) step();
    session.barrier();
  }
}

}  // namespace etwire::cluster
