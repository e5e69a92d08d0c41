#include "core/comm/doorbells.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <new>

#include "core/comm/mpi_context.h"
#include "core/comm/request_wait.h"

namespace sluice::comm {
namespace {

constexpr size_t kNameLength = 64;

// A name no other segment on the node has: rank 0's pid, a clock reading and a count of this process's segments.
std::array<char, kNameLength> segment_name() {
  static std::atomic<unsigned> made{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  std::array<char, kNameLength> name{};
  std::snprintf(name.data(), name.size(), "/sluice-bells-%ld-%llx-%u", static_cast<long>(getpid()),
                static_cast<unsigned long long>(now), made++);
  return name;
}

// Maps `bytes` of the segment `name`, created zeroed by whichever rank comes first; null where that fails.
BellWord* map_segment(const char* name, size_t bytes) {
  const int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
  if (fd < 0) return nullptr;
  void* memory = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(bytes)) == 0) {
    memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  close(fd);
  if (memory == MAP_FAILED) return nullptr;
  // The zeroed pages hold the bells' atomics; constructing them over zeros writes the same zeros.
  return static_cast<BellWord*>(memory);
}

}  // namespace

Doorbells::Doorbells(MPI_Comm comm) {
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  if (size_ < 2) return;  // nobody to ring
  std::array<char, kNameLength> name = rank_ == 0 ? segment_name() : std::array<char, kNameLength>{};
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibcast(name.data(), static_cast<int>(name.size()), MPI_CHAR, 0, comm, &request),
            "MPI_Ibcast (doorbell segment name)");
  wait_for(request, "doorbell set-up: the segment's name from rank 0");
  name.back() = '\0';
  bytes_ = sizeof(BellWord) * static_cast<size_t>(size_);
  bells_ = map_segment(name.data(), bytes_);
  try {
    check_mpi(MPI_Ibarrier(comm, &request), "MPI_Ibarrier (doorbell set-up)");
    wait_for(request, "doorbell set-up: every rank mapping its node's segment");
  } catch (...) {
    shm_unlink(name.data());
    if (bells_ != nullptr) munmap(bells_, bytes_);
    throw;
  }
  shm_unlink(name.data());  // the first rank of each node removes the name; the others find it gone
}

Doorbells::~Doorbells() {
  if (bells_ != nullptr) munmap(bells_, bytes_);
}

BellWord* Doorbells::mine() const { return bells_ == nullptr ? nullptr : &bells_[rank_]; }

void Doorbells::ring(int peer) const {
  if (bells_ == nullptr || peer < 0 || peer >= size_) return;
  ring_bell(bells_[peer]);
}

}  // namespace sluice::comm
