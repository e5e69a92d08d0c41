// Collective checkpoint save: one HDF5 file per checkpoint, written by all ranks at once with parallel HDF5.
#pragma once

#include <mpi.h>

#include <string>

#include "checkpoint/snapshot.h"

namespace sluice::checkpoint {

// How ranks move dataset bytes into the file. Each rank owns whole datasets, so independent transfers need no
// coordination; collective transfers let MPI-IO aggregate writes (bench/checkpoint measures both).
enum class TransferMode { kIndependent, kCollective };

struct SaveOptions {
  TransferMode transfer = TransferMode::kIndependent;
};

// Collective over comm: every rank calls it with the same path and its own Snapshot. Writes
// "<path>.tmp-<SLURM_JOB_ID or rank 0's pid>", fsyncs it, and only when all ranks succeeded renames it to path
// and fsyncs the directory, so path is either the previous file or the complete new one.
// Errors (thrown identically on every rank): kInvalidArgument for a bad Snapshot (malformed path, dims that do not
// match data, a path two ranks both contribute, ranks disagreeing on train_ints/attributes); kCheckpoint/kIo for
// file-system or HDF5 failures, naming the file.
void save(MPI_Comm comm, const std::string& path, const Snapshot& mine, const SaveOptions& options = {});

}  // namespace sluice::checkpoint
