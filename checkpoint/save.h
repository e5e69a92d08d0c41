// Collective checkpoint save: one HDF5 file per checkpoint. Rank 0 writes it with serial HDF5; every other rank
// sends it its datasets point to point, chunk by chunk as rank 0 asks (checkpoint/dataset_transfer.h), and every
// wait on another rank is bounded by comm.timeout (docs/WAITING.md).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <string>

#include "checkpoint/snapshot.h"

namespace sluice::checkpoint {

struct SaveOptions {
  // Rank 0 receives other ranks' datasets in pieces of at most this many bytes (two at a time) and writes its own
  // in the same pieces; only rank 0's value counts. Between 8 bytes and 1 GiB.
  size_t chunk_bytes = size_t{32} << 20;
  // Called on this rank once the metadata is agreed, right before the data moves; tests stop a rank here.
  std::function<void()> before_data_transfer;
};

// Collective over comm: every rank calls it with the same path and its own Snapshot. Rank 0 writes
// "<path>.tmp-<SLURM_JOB_ID or its pid>", fsyncs it, and only when all ranks succeeded
// renames it to path and fsyncs the directory, so path is either the previous file or the complete new one.
// Errors (thrown identically on every rank): kInvalidArgument for a bad Snapshot (malformed path, dims that do not
// match data, a path two ranks both contribute, ranks disagreeing on train_ints/attributes) or options;
// kCheckpoint/kIo for file-system or HDF5 failures, naming the file; kTimeout naming the rank(s) that stopped
// answering (comm.timeout).
void save(MPI_Comm comm, const std::string& path, const Snapshot& mine, const SaveOptions& options = {});

}  // namespace sluice::checkpoint
