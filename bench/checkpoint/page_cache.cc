#include "bench/checkpoint/page_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/common/error.h"

namespace sluice::bench {
namespace {

// Closes the descriptor on every path out, including the throwing ones.
class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY)) {
    if (fd_ < 0) fail("cannot open", errno);
  }
  ~ReadOnlyFile() { ::close(fd_); }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  int fd() const { return fd_; }
  [[noreturn]] void fail(const std::string& action, int error_number) const {
    throw Error(ErrorCode::kIo, action + " '" + path_ + "': " + std::strerror(error_number));
  }

 private:
  std::string path_;
  int fd_;
};

}  // namespace

void evict_from_page_cache(const std::string& path) {
  const ReadOnlyFile file(path);
  // posix_fadvise returns the error number instead of setting errno.
  const int status = ::posix_fadvise(file.fd(), 0, 0, POSIX_FADV_DONTNEED);
  if (status != 0) file.fail("cannot evict from the page cache", status);
}

double resident_fraction(const std::string& path) {
  const ReadOnlyFile file(path);
  struct stat info {};
  if (::fstat(file.fd(), &info) != 0) file.fail("cannot stat", errno);
  if (info.st_size == 0) return 0.0;

  const size_t size = static_cast<size_t>(info.st_size);
  // Mapping does not read anything: mincore only looks at which of the file's pages the kernel already holds.
  void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, file.fd(), 0);
  if (mapping == MAP_FAILED) file.fail("cannot map", errno);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> residency((size + page - 1) / page);
  const int status = ::mincore(mapping, size, residency.data());
  const int mincore_error = errno;
  ::munmap(mapping, size);
  if (status != 0) file.fail("cannot query page residency of", mincore_error);

  size_t resident = 0;
  for (unsigned char flags : residency) resident += flags & 1u;  // bit 0: page is in memory
  return static_cast<double>(resident) / static_cast<double>(residency.size());
}

}  // namespace sluice::bench
