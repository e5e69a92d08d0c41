#include "core/comm/mpi_transport.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/comm/mpi_context.h"
#include "core/comm/ordered_sum.h"
#include "core/comm/request_wait.h"
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
  // `what`: what the wait is for, with the peer's world rank, for a TIMEOUT's message.
  MpiRequest(MPI_Request req, bool is_receive, std::string what)
      : req_(req), is_receive_(is_receive), what_(std::move(what)) {}
  ~MpiRequest() override {
    // An abandoned request (error path) must not fire into freed memory later. A receive can be cancelled;
    // a send cannot be reliably (MPI-4 deprecates it, and Open MPI may never cancel a large unmatched send),
    // so it is only released. After MPI_Finalize no MPI call is allowed at all.
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized || req_ == MPI_REQUEST_NULL) return;
    if (is_receive_) {
      MPI_Cancel(&req_);
      finish_or_abandon(req_);  // a cancel completes locally; bounded all the same
    } else {
      MPI_Request_free(&req_);
    }
  }
  void wait() override { wait_for(req_, what_); }
  bool test() override {
    int done = 0;
    check_mpi(MPI_Test(&req_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  }

 private:
  MPI_Request req_;
  bool is_receive_;
  std::string what_;
};

class CompletedRequest : public Request {
 public:
  void wait() override {}
  bool test() override { return true; }
};

// MPI_TAG_UB of `comm`. The standard attaches it to MPI_COMM_WORLD and keeps it fixed for the run, so where an
// implementation leaves it off a derived communicator the world's value holds; 32767 is what MPI promises.
int tag_upper_bound(MPI_Comm comm) {
  for (MPI_Comm c : {comm, MPI_COMM_WORLD}) {
    int* bound = nullptr;
    int found = 0;
    check_mpi(MPI_Comm_get_attr(c, MPI_TAG_UB, &bound, &found), "MPI_Comm_get_attr (MPI_TAG_UB)");
    if (found && bound != nullptr) return *bound;
  }
  return 32767;
}

}  // namespace

MpiTransport::MpiTransport(MPI_Comm comm) : comm_(comm), max_tag_(tag_upper_bound(comm)) {
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  for (int r = 0; r < size_; ++r) world_ranks_.push_back(world_ranks_text(comm, {r}));
}

std::unique_ptr<Request> MpiTransport::isend(const float* data, int64_t count, int peer, int tag) {
  MPI_Request req;
  check_mpi(MPI_Isend(data, as_int_count(count), MPI_FLOAT, peer, tag, comm_, &req), "MPI_Isend");
  return std::make_unique<MpiRequest>(req, false, "send (tag " + std::to_string(tag) + ") to " + world_rank(peer));
}

std::unique_ptr<Request> MpiTransport::irecv(float* data, int64_t count, int peer, int tag) {
  MPI_Request req;
  check_mpi(MPI_Irecv(data, as_int_count(count), MPI_FLOAT, peer, tag, comm_, &req), "MPI_Irecv");
  return std::make_unique<MpiRequest>(req, true, "receive (tag " + std::to_string(tag) + ") from " + world_rank(peer));
}

std::string MpiTransport::world_rank(int peer) const {
  return peer >= 0 && static_cast<size_t>(peer) < world_ranks_.size() ? world_ranks_[static_cast<size_t>(peer)]
                                                                      : "rank " + std::to_string(peer);
}

MpiGroup::MpiGroup(MPI_Comm comm, int64_t max_floats_per_exchange)
    : comm_(comm), max_floats_per_exchange_(max_floats_per_exchange) {
  if (max_floats_per_exchange < 1) {
    throw Error(ErrorCode::kInvalidArgument, "MpiGroup: max_floats_per_exchange must be at least 1, got " +
                                                 std::to_string(max_floats_per_exchange));
  }
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  peers_ = peers_text(comm);
  if (size_ > 1) ordered_sums_ = make_ordered_sum_channel(comm_);
}

std::unique_ptr<Request> MpiGroup::start_ordered_sum(float* data, int64_t count) {
  if (count < 0) {
    throw Error(ErrorCode::kInvalidArgument, "start_ordered_sum: count must be non-negative, got " +
                                                 std::to_string(count));
  }
  if (data == nullptr && count > 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "start_ordered_sum: data is null but count is " + std::to_string(count));
  }
  if (size_ == 1 || count == 0) return std::make_unique<CompletedRequest>();
  return start_ordered_sum_request(ordered_sums_, rank_, size_, data, count, max_floats_per_exchange_);
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
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(data, as_int_count(count), MPI_DOUBLE, out.data(), as_int_count(count), MPI_DOUBLE,
                           comm_, &request),
            "MPI_Iallgather");
  wait_for(request, "all-gather of " + std::to_string(count) + " values from " + peers_);
  return out;
}

std::vector<std::string> MpiGroup::gather_text(const std::string& mine, int root) {
  const int length = as_int_count(static_cast<int64_t>(mine.size()));
  std::vector<int> lengths(rank_ == root ? size_ : 0);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, comm_, &request),
            "MPI_Igather (text lengths)");
  wait_for(request, "gather of text lengths among " + peers_);
  std::vector<int> offsets(lengths.size(), 0);
  int64_t total = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = as_int_count(total);
    total += lengths[r];
  }
  std::vector<char> all(static_cast<size_t>(total) + 1);
  check_mpi(MPI_Igatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, root,
                         comm_, &request),
            "MPI_Igatherv (text)");
  wait_for(request, "gather of texts among " + peers_);
  std::vector<std::string> texts;
  for (size_t r = 0; r < lengths.size(); ++r) texts.emplace_back(all.data() + offsets[r], lengths[r]);
  return texts;
}

void MpiGroup::broadcast(float* data, int64_t count, int root) {
  constexpr int64_t kSlice = int64_t{1} << 30;  // MPI counts are ints: large buffers go in slices
  for (int64_t offset = 0; offset < count; offset += kSlice) {
    const int n = static_cast<int>(std::min(kSlice, count - offset));
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibcast(data + offset, n, MPI_FLOAT, root, comm_, &request), "MPI_Ibcast");
    wait_for(request, "broadcast of " + std::to_string(n) + " floats from " + world_ranks_text(comm_, {root}));
  }
}

bool MpiGroup::any(bool flag) {
  int local = flag ? 1 : 0;
  int global = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&local, &global, 1, MPI_INT, MPI_LOR, comm_, &request), "MPI_Iallreduce (flag)");
  wait_for(request, "agreed flag from " + peers_);
  return global != 0;
}

void MpiGroup::barrier() {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
  wait_for(request, "barrier with " + peers_);
}

}  // namespace sluice::comm
