// Which MPI library this program is linked with, for the choices that depend on it outside MPI itself (the srun
// plugin a batch script asks for: Open MPI's ranks get their rank and peers from PMIx, Debian's MPICH from PMI-2).
#pragma once

#include <string>

namespace sluice::comm {

enum class MpiLibrary { kOpenMpi, kMpich, kOther };

// From MPI_Get_library_version, which MPI allows before MPI_Init, so a command that never starts MPI (`sluice
// submit`) can ask.
MpiLibrary linked_mpi_library();

// The library's own version line (the first line of MPI_Get_library_version), for messages.
std::string linked_mpi_version_line();

}  // namespace sluice::comm
