#include "core/comm/mpi_library.h"

#include <mpi.h>

namespace sluice::comm {

std::string linked_mpi_version_line() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string line(text, static_cast<size_t>(length));
  return line.substr(0, line.find('\n'));
}

MpiLibrary linked_mpi_library() {
  const std::string line = linked_mpi_version_line();
  if (line.find("Open MPI") != std::string::npos) return MpiLibrary::kOpenMpi;
  if (line.find("MPICH") != std::string::npos) return MpiLibrary::kMpich;
  return MpiLibrary::kOther;
}

}  // namespace sluice::comm
