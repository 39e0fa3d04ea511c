// `etwire devices`: the RDMA devices a verbs run could use: each port's state, link layer,
// active MTU and speed, and its GID table with each entry's type and address. Exit 0 with the
// list; 2 when there is no RDMA device, saying why.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "nic/verbs/rdma_devices.h"
#include "runner/exit_codes.h"

namespace etwire::cli {

CommandAction add_devices_command(CLI::App& app) {
  app.add_subcommand("devices",
                     "List the RDMA devices (libibverbs): per port its state, link layer, active "
                     "MTU and speed, and its GID table with each entry's type (RoCE v2, RoCE v1, "
                     "IB) and address. Exit 2 when there is no RDMA device.");
  return []() -> int {
    try {
      std::cout << nic::verbs::devices_to_text(nic::verbs::list_rdma_devices());
      return runner::kExitOk;
    } catch (const nic::verbs::NoRdmaDevice& e) {
      std::cerr << "error: " << e.what() << "\n";
      return runner::kExitBadInput;
    } catch (const std::runtime_error& e) {
      std::cerr << "error: " << e.what() << "\n";
      return runner::kExitFailure;
    }
  };
}

}  // namespace etwire::cli
