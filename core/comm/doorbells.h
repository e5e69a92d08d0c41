// The bells (bell.h) of the ranks of one communicator: a segment of shared memory on each node with one bell per
// rank of the communicator, which the node's ranks of that communicator map. A rank sleeps on its own bell and
// rings a peer's after doing what that peer may be waiting for (mpi_transport.cc: after posting a send to it, and
// after completing a receive from it, which is what lets the peer's send complete).
//
// Every node gets a segment of the same name in its own /dev/shm, so nothing needs to know which ranks share a
// node: a ring for a peer on another node lands in a bell nobody sleeps on, and that peer's waits end on their
// timers as they did before bells. The segment is unlinked once every rank has mapped it, so a job that dies
// leaves nothing behind in /dev/shm.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "core/comm/bell.h"

namespace sluice::comm {

class Doorbells {
 public:
  // Collective over `comm`, bounded by comm.timeout: rank 0 names the segment and broadcasts the name, every rank
  // maps it, a barrier, then every rank unlinks it. Where shared memory cannot be had (no /dev/shm, a limit) this
  // rank has no bells and says nothing: they are a hint (bell.h). An MPI failure throws Error(kComm/kTimeout).
  explicit Doorbells(MPI_Comm comm);
  ~Doorbells();
  Doorbells(const Doorbells&) = delete;
  Doorbells& operator=(const Doorbells&) = delete;

  // This rank's bell, or null without shared memory.
  BellWord* mine() const;
  // Rings the bell of `peer` (a rank of the communicator); nothing without shared memory or for a rank outside it.
  void ring(int peer) const;

 private:
  BellWord* bells_ = nullptr;  // one per rank of the communicator, mapped; null without shared memory
  size_t bytes_ = 0;
  int rank_ = 0;
  int size_ = 0;
};

}  // namespace sluice::comm
