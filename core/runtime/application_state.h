// The host application's own arrays in the trainer's checkpoints (sluice_register_state): a simulation and its
// surrogate restart from one atomic file. The arrays are borrowed: Sluice copies them into every checkpoint it
// writes and copies a checkpoint's values back into them on every load, after all checks passed on every rank.
//
// A replicated array is identical on every rank: rank 0 writes it once (/application/<name>) and every rank
// restores it. A per-rank array is each world rank's own (/application/<name>/rank_<r>); it resumes only under the
// same world size (kCheckpoint naming the array otherwise). docs/CHECKPOINT_FORMAT.md describes the datasets.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/reader.h"
#include "checkpoint/snapshot.h"

namespace sluice::runtime {

enum class StateScope { kPerRank, kReplicated };

struct StateArray {
  std::string name;
  void* data = nullptr;  // borrowed: count elements of type
  checkpoint::DataType type = checkpoint::DataType::kFloat64;
  int64_t count = 0;
  StateScope scope = StateScope::kPerRank;
};

// The registered arrays of one trainer, in registration order. Local; one thread at a time.
class ApplicationState {
 public:
  // Error(kInvalidArgument) naming the problem: a name that is empty, has characters outside [A-Za-z0-9_.-] or is
  // registered already; a negative count; NULL data with count > 0.
  void add(const std::string& name, void* data, checkpoint::DataType type, int64_t count, StateScope scope);
  // Error(kInvalidArgument) when no array of that name is registered.
  void remove(const std::string& name);
  const std::vector<StateArray>& arrays() const { return arrays_; }

 private:
  std::vector<StateArray> arrays_;
};

// Collective over comm (`state` may be null: nothing registered). Every rank must have registered the same names
// with the same type and scope, and replicated arrays with the same count (per-rank counts may differ, e.g. an
// uneven domain decomposition); otherwise every rank throws Error(kInvalidArgument) naming the first rank that
// differs from rank 0 and the array.
void check_same_registration(MPI_Comm comm, const ApplicationState* state);

// This rank's share of the arrays as checkpoint entries: its per-rank arrays, and on rank 0 the replicated ones.
void add_application_entries(const ApplicationState* state, int rank, checkpoint::Snapshot& snapshot);

// Reads every registered array from `reader` into staging buffers (nothing registered is touched). Throws
// Error(kCheckpoint) naming the file and the array when the file lacks it, holds it with another type, count or
// scope, or (per-rank arrays) was written by another world size. Arrays in the file that are not registered are
// ignored.
std::vector<std::vector<unsigned char>> stage_application_state(const checkpoint::Reader& reader,
                                                                const ApplicationState* state, int rank, int world);

// Copies staged buffers (from stage_application_state on the same state) into the registered arrays. Cannot fail.
void restore_application_state(const ApplicationState* state, const std::vector<std::vector<unsigned char>>& staged);

}  // namespace sluice::runtime
