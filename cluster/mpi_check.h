// Turns an MPI call's error code into an exception that names the call (for the files that call
// MPI, never for their users).
#pragma once

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace etwire::cluster {

inline void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(call) + " failed: " + text);
}

}  // namespace etwire::cluster
