#include "checkpoint/mpi_io_name.h"

#include <fcntl.h>
#include <unistd.h>

namespace sluice::checkpoint {
namespace {

// Paths shorter than this pass unchanged: well below where lockedfile's buffer overflows (a path plus its own
// suffixes within 256 bytes), so ordinary paths keep their ordinary name in MPI's messages.
constexpr std::size_t kLongPath = 128;

}  // namespace

MpiIoName::MpiIoName(const std::string& path) : name_(path) {
  const std::size_t slash = path.rfind('/');
  if (path.size() < kLongPath || slash == std::string::npos || slash == 0) return;
  const std::string directory = path.substr(0, slash);
  directory_fd_ = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd_ < 0) return;  // the open below then reports the problem with the real path
  const std::string short_name = "/proc/self/fd/" + std::to_string(directory_fd_) + path.substr(slash);
  if (::access(("/proc/self/fd/" + std::to_string(directory_fd_)).c_str(), X_OK) == 0) name_ = short_name;
}

MpiIoName::~MpiIoName() {
  if (directory_fd_ >= 0) ::close(directory_fd_);
}

}  // namespace sluice::checkpoint
