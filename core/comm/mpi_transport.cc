#include "core/comm/mpi_transport.h"

#include <limits>
#include <string>
#include <vector>

#include "core/comm/mpi_context.h"
#include "core/common/error.h"

namespace sluice::comm {
namespace {

int as_int_count(int64_t count) {
  if (count < 0 || count > std::numeric_limits<int>::max()) {
    throw Error(ErrorCode::kComm, "message of " + std::to_string(count) + " floats exceeds MPI's int count");
  }
  return static_cast<int>(count);
}

class MpiRequest : public Request {
 public:
  explicit MpiRequest(MPI_Request req) : req_(req) {}
  ~MpiRequest() override {
    // An abandoned request (error path) must not leak or fire into freed memory later.
    if (req_ != MPI_REQUEST_NULL) {
      MPI_Cancel(&req_);
      MPI_Wait(&req_, MPI_STATUS_IGNORE);
    }
  }
  void wait() override { check_mpi(MPI_Wait(&req_, MPI_STATUS_IGNORE), "MPI_Wait"); }
  bool test() override {
    int done = 0;
    check_mpi(MPI_Test(&req_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  }

 private:
  MPI_Request req_;
};

// Ordered sum over a group: all-gather every rank's vector, then add them up in rank order. The
// gather buffer is owned by the request so the caller can keep computing while it is in flight.
class OrderedSumRequest : public Request {
 public:
  OrderedSumRequest(MPI_Comm comm, int size, float* data, int64_t count)
      : data_(data), count_(count), size_(size), gathered_(static_cast<size_t>(count) * size) {
    check_mpi(MPI_Iallgather(data, as_int_count(count), MPI_FLOAT, gathered_.data(), as_int_count(count),
                             MPI_FLOAT, comm, &req_),
              "MPI_Iallgather (gradient sum)");
  }
  ~OrderedSumRequest() override {
    if (req_ != MPI_REQUEST_NULL) MPI_Wait(&req_, MPI_STATUS_IGNORE);
  }
  void wait() override {
    if (finished_) return;
    check_mpi(MPI_Wait(&req_, MPI_STATUS_IGNORE), "MPI_Wait (gradient sum)");
    finish();
  }
  bool test() override {
    if (finished_) return true;
    int done = 0;
    check_mpi(MPI_Test(&req_, &done, MPI_STATUS_IGNORE), "MPI_Test (gradient sum)");
    if (done) finish();
    return done != 0;
  }

 private:
  void finish() {
    for (int64_t i = 0; i < count_; ++i) {
      float acc = gathered_[i];
      for (int r = 1; r < size_; ++r) acc += gathered_[static_cast<size_t>(r) * count_ + i];
      data_[i] = acc;
    }
    finished_ = true;
  }

  float* data_;
  int64_t count_;
  int size_;
  std::vector<float> gathered_;
  MPI_Request req_ = MPI_REQUEST_NULL;
  bool finished_ = false;
};

class CompletedRequest : public Request {
 public:
  void wait() override {}
  bool test() override { return true; }
};

}  // namespace

MpiTransport::MpiTransport(MPI_Comm comm) : comm_(comm) {
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
}

std::unique_ptr<Request> MpiTransport::isend(const float* data, int64_t count, int peer, int tag) {
  MPI_Request req;
  check_mpi(MPI_Isend(data, as_int_count(count), MPI_FLOAT, peer, tag, comm_, &req), "MPI_Isend");
  return std::make_unique<MpiRequest>(req);
}

std::unique_ptr<Request> MpiTransport::irecv(float* data, int64_t count, int peer, int tag) {
  MPI_Request req;
  check_mpi(MPI_Irecv(data, as_int_count(count), MPI_FLOAT, peer, tag, comm_, &req), "MPI_Irecv");
  return std::make_unique<MpiRequest>(req);
}

MpiGroup::MpiGroup(MPI_Comm comm) : comm_(comm) {
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
}

std::unique_ptr<Request> MpiGroup::start_ordered_sum(float* data, int64_t count) {
  if (size_ == 1) return std::make_unique<CompletedRequest>();
  return std::make_unique<OrderedSumRequest>(comm_, size_, data, count);
}

void MpiGroup::ordered_sum(double* data, int64_t count) {
  if (size_ == 1) return;
  std::vector<double> all = all_gather(data, count);
  for (int64_t i = 0; i < count; ++i) {
    double acc = all[i];
    for (int r = 1; r < size_; ++r) acc += all[static_cast<size_t>(r) * count + i];
    data[i] = acc;
  }
}

std::vector<double> MpiGroup::all_gather(const double* data, int64_t count) {
  std::vector<double> out(static_cast<size_t>(count) * size_);
  check_mpi(MPI_Allgather(data, as_int_count(count), MPI_DOUBLE, out.data(), as_int_count(count), MPI_DOUBLE,
                          comm_),
            "MPI_Allgather");
  return out;
}

bool MpiGroup::any(bool flag) {
  int local = flag ? 1 : 0;
  int global = 0;
  check_mpi(MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_LOR, comm_), "MPI_Allreduce (flag)");
  return global != 0;
}

void MpiGroup::barrier() { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

}  // namespace sluice::comm
