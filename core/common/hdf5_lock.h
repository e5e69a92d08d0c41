// One process-wide lock around every HDF5 call Sluice makes. Debian's parallel HDF5 (and most MPI builds of
// HDF5) is built without --enable-threadsafe: two threads inside the library at once corrupt its global state
// (two trainers saving from two threads segfaulted in H5Fcreate). The checkpoint writer and reader and the hdf5
// data source each hold an Hdf5Lock for as long as they are inside HDF5, including the closing of handles.
//
// It lives in core/common, not checkpoint/, because core/data (the hdf5 data source) may not use checkpoint/;
// it is only a mutex and includes no HDF5 header. The mutex is recursive because a locked reader or writer
// closes handles (Hdf5Handle::close locks too) and reports errors (take_hdf5_error_text) from inside.
//
// MPI: rank 0 of a checkpoint save holds the lock while it receives the other ranks' datasets (checkpoint/save.cc).
// Each rank is its own process with its own lock, so ranks never wait on each other's lock. Two threads of one
// process saving trainers whose communicators span several processes could still block each other: thread A holds
// the lock as rank 0 of communicator 1 while it waits for data from a process whose thread B (communicator 2) holds
// that process's lock, waiting for us. Every such wait ends in a TIMEOUT (comm.timeout), not a hang, but both saves
// fail: such hosts must not save multi-process trainers concurrently from several threads (save them one after the
// other, in the same order on every rank); trainers on MPI_COMM_SELF, or saves from one thread, are safe. Any
// concurrent MPI use from two threads needs MPI_THREAD_MULTIPLE anyway.
#pragma once

#include <mutex>

namespace sluice {

class Hdf5Lock {
 public:
  Hdf5Lock();
  Hdf5Lock(const Hdf5Lock&) = delete;
  Hdf5Lock& operator=(const Hdf5Lock&) = delete;

 private:
  std::unique_lock<std::recursive_mutex> lock_;
};

}  // namespace sluice
