// The name under which a checkpoint file is handed to MPI-IO. Open MPI 4.1's ompio runs its shared-file-pointer
// component selection on every MPI_File_open, and the lockedfile component formats the file name into a fixed
// buffer with sprintf: a path of about 240 characters or more aborts the process ("buffer overflow detected") under
// glibc's FORTIFY. The components cannot be deselected from inside a library (OMPI_MCA_sharedfp is read when the
// framework opens, at or before the first file open, and is the host's business), and chdir() is process-wide.
// So a long path is handed over as /proc/self/fd/<descriptor of its directory>/<file name>: the same file under
// a short name (every rank opens its own descriptor; the names may differ between ranks, the file does not).
// Without /proc (not Linux) the path is used as it is.
#pragma once

#include <string>

namespace sluice::checkpoint {

class MpiIoName {
 public:
  explicit MpiIoName(const std::string& path);
  ~MpiIoName();
  MpiIoName(const MpiIoName&) = delete;
  MpiIoName& operator=(const MpiIoName&) = delete;

  // The name to give MPI_File_open / H5Fcreate; valid while this object lives.
  const std::string& get() const { return name_; }

 private:
  int directory_fd_ = -1;
  std::string name_;
};

}  // namespace sluice::checkpoint
