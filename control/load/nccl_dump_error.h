// How the readers of NCCL's dumps (control/load/nccl_graph.h, nccl_topology.h) refuse a file.
#pragma once

#include <stdexcept>

namespace etwire::control {

// "FILE:LINE: what is wrong", or "FILE: what is wrong" for a file that cannot be read.
class NcclDumpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace etwire::control
