// The tests of a run split between emulator processes, each an MPI process: mpirun starts this
// program as many times as the tests need (ctest runs it under mpirun), and MPI starts here.
#include <gtest/gtest.h>

#include "cluster/session.h"

int main(int argc, char** argv) {
  const auto session = etwire::cluster::Session::start(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
