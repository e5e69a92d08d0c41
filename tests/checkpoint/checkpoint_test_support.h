// Helpers shared by the checkpoint tests: a scratch directory all ranks see, and synthetic snapshots whose values
// follow a formula the tests re-evaluate independently (so no expected value is copied from the code under test).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "checkpoint/snapshot.h"

namespace sluice::checkpoint::testing {

// Collective: rank 0 makes a fresh directory under $TMPDIR (or /tmp) and every rank gets its path.
std::string make_shared_temp_dir(MPI_Comm comm);

// Value of element i of a layer's parameter or optimizer state, as the synthetic model defines it.
float synthetic_value(int layer, int tensor, size_t i);

// Layers are owned round-robin: layer l belongs to rank l % ranks (as pipeline stages would own them).
// Each owned layer gets /model/layer_NNNN/{weight [3,4], bias [4]} and /optimizer/layer_NNNN/weight/exp_avg [3,4].
Snapshot synthetic_snapshot(int layers, int ranks, int my_rank);

// What Entry::data must hold for path (one of the three synthetic tensors of any layer).
std::vector<float> expected_data(const std::string& path);

// Reads an entire file into memory / writes it back: the tests corrupt files byte-wise.
std::string read_file_bytes(const std::string& path);
void write_file_bytes(const std::string& path, const std::string& bytes);

}  // namespace sluice::checkpoint::testing
