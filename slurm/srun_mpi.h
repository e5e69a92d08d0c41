// The srun MPI plugin a batch script starts its ranks with (`srun --mpi=NAME`): how the ranks learn their rank and
// peers from Slurm. Open MPI's ranks use PMIx; Debian's MPICH uses PMI-2 (it has no PMIx client). `sluice submit
// --mpi` takes these names; without it the plugin matches the MPI the `sluice` binary is linked with.
#pragma once

#include "core/config/choice_table.h"

namespace sluice::slurm {

enum class SrunMpi { kPmix, kPmi2 };

inline const config::ChoiceTable<SrunMpi>& srun_mpi_choices() {
  static const config::ChoiceTable<SrunMpi> table{{SrunMpi::kPmix, "pmix"}, {SrunMpi::kPmi2, "pmi2"}};
  return table;
}

}  // namespace sluice::slurm
