// This process's rank in MPI_COMM_WORLD and the world's size, for the MPI tests.
#pragma once

#include <mpi.h>

namespace sluice::testing {

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

}  // namespace sluice::testing
