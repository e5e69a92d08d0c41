#include "core/comm/ordered_sum.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/comm/mpi_context.h"
#include "core/comm/request_wait.h"
#include "core/common/error.h"

namespace sluice::comm {
namespace {

// One bandwidth-efficient ordered sum over a chunk of at most ~INT_MAX floats, in two phases:
//   1. MPI_Ialltoallv: the chunk is cut into `size` near-equal slices and rank r receives slice r from every
//      rank (a reduce-scatter whose reduction we do ourselves), then adds them in rank order 0, 1, ..., size-1
//      exactly as the all-gather version did per element, so results stay bit-identical;
//   2. MPI_Iallgatherv (in place) of the summed slices back into the caller's buffer.
// Each rank sends and receives about 2 x chunk floats and holds chunk extra floats, instead of (size-1) x chunk
// and size x chunk. MPI requires the count/displacement arrays to live until each phase completes: members.
class SliceExchange {
 public:
  enum class Phase { kScattering, kSummed, kGathering, kDone };

  SliceExchange(MPI_Comm comm, int rank, int size, float* data, int count, const std::string& peers)
      : comm_(comm), rank_(rank), size_(size), data_(data), counts_(size), offsets_(size), peers_(peers) {
    const int base = count / size;
    const int larger = count % size;  // the first `larger` slices hold one float more
    for (int s = 0; s < size; ++s) {
      counts_[s] = base + (s < larger ? 1 : 0);
      offsets_[s] = s * base + std::min(s, larger);
    }
    const int mine = counts_[rank];
    received_.resize(static_cast<size_t>(mine) * size);
    received_counts_.assign(size, mine);
    received_offsets_.resize(size);
    for (int r = 0; r < size; ++r) received_offsets_[r] = r * mine;  // fits: chunk sizes keep size x mine <= INT_MAX
    check_mpi(MPI_Ialltoallv(data_, counts_.data(), offsets_.data(), MPI_FLOAT, received_.data(),
                             received_counts_.data(), received_offsets_.data(), MPI_FLOAT, comm_, &req_),
              "MPI_Ialltoallv (gradient sum, slice exchange)");
  }
  ~SliceExchange() {
    // Collectives cannot be cancelled; an abandoned exchange must not write into freed buffers later. After a
    // TIMEOUT it may never finish: its buffers are then leaked (the process is to end; request_wait.h).
    if (!finish_or_abandon(req_)) {
      new std::vector<float>(std::move(received_));  // NOLINT: deliberately leaked, MPI may still write here
      new std::vector<int>(std::move(counts_));
      new std::vector<int>(std::move(offsets_));
      new std::vector<int>(std::move(received_counts_));
      new std::vector<int>(std::move(received_offsets_));
    }
  }
  SliceExchange(const SliceExchange&) = delete;
  SliceExchange& operator=(const SliceExchange&) = delete;

  Phase phase() const { return phase_; }

  // True once this rank's slice is summed (phase 1 over); never blocks.
  bool test_slice_summed() {
    if (phase_ != Phase::kScattering) return true;
    int done = 0;
    check_mpi(MPI_Test(&req_, &done, MPI_STATUS_IGNORE), "MPI_Test (gradient sum, slice exchange)");
    if (done) sum_my_slice();
    return done != 0;
  }
  void wait_slice_summed() {
    if (phase_ != Phase::kScattering) return;
    wait_for(req_, "gradient sum (slice exchange) with " + peers_);
    sum_my_slice();
  }
  void start_gather() {
    check_mpi(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data_, counts_.data(), offsets_.data(), MPI_FLOAT,
                              comm_, &req_),
              "MPI_Iallgatherv (gradient sum, summed slices)");
    phase_ = Phase::kGathering;
  }
  // True once the whole chunk holds the sum; false while phase 2 has not started or is in flight.
  bool test_done() {
    if (phase_ != Phase::kGathering) return phase_ == Phase::kDone;
    int done = 0;
    check_mpi(MPI_Test(&req_, &done, MPI_STATUS_IGNORE), "MPI_Test (gradient sum, summed slices)");
    if (done) phase_ = Phase::kDone;
    return done != 0;
  }
  void wait_done() {
    if (phase_ == Phase::kDone) return;
    wait_for(req_, "gradient sum (summed slices) from " + peers_);
    phase_ = Phase::kDone;
  }

 private:
  void sum_my_slice() {
    const size_t mine = static_cast<size_t>(counts_[rank_]);
    float* out = data_ + offsets_[rank_];  // phase 1 is over: the send side no longer reads `data_`
    for (size_t i = 0; i < mine; ++i) {
      float acc = received_[i];
      for (int r = 1; r < size_; ++r) acc += received_[static_cast<size_t>(r) * mine + i];
      out[i] = acc;
    }
    std::vector<float>().swap(received_);  // other sums may still be in flight: give the memory back now
    phase_ = Phase::kSummed;
  }

  MPI_Comm comm_;
  int rank_;
  int size_;
  float* data_;
  std::vector<int> counts_, offsets_;  // slice s of the chunk: send counts/offsets, and the all-gather layout
  std::vector<float> received_;        // slice `rank_` from every rank, rank-major
  std::vector<int> received_counts_, received_offsets_;
  std::string peers_;  // "world ranks 1, 3", for a TIMEOUT's message
  MPI_Request req_ = MPI_REQUEST_NULL;
  Phase phase_ = Phase::kScattering;
};

// MPI matches collectives on a communicator by the order ranks start them. Phase 1 of every ordered sum starts
// when the caller starts the sum (same order on every rank), but phase 2 starts whenever a rank notices phase 1
// is over, which depends on how that rank polls. So phase 2s are started strictly in phase-1 order from this
// queue, and on a private duplicate of the group's communicator, so that blocking collectives the caller runs
// on the group meanwhile (barrier, any, ...) cannot interleave differently on different ranks either.
}  // namespace

class OrderedSumChannel {
 public:
  explicit OrderedSumChannel(MPI_Comm group_comm) {
    check_mpi(MPI_Comm_dup(group_comm, &comm_), "MPI_Comm_dup (gradient sums)");
    peers_ = peers_text(comm_);
  }
  ~OrderedSumChannel() { release_communicator(comm_); }
  OrderedSumChannel(const OrderedSumChannel&) = delete;
  OrderedSumChannel& operator=(const OrderedSumChannel&) = delete;

  MPI_Comm comm() const { return comm_; }
  const std::string& peers() const { return peers_; }
  void enqueue(SliceExchange* exchange) { awaiting_gather_.push_back(exchange); }
  void forget(SliceExchange* exchange) {
    awaiting_gather_.erase(std::remove(awaiting_gather_.begin(), awaiting_gather_.end(), exchange),
                           awaiting_gather_.end());
  }

  // Starts as many phase 2s as possible, in order, without blocking.
  void advance() {
    while (!awaiting_gather_.empty() && awaiting_gather_.front()->test_slice_summed()) start_front_gather();
  }
  // Blocks until `exchange`'s phase 2 has started, starting every earlier one first.
  void advance_through(SliceExchange* exchange) {
    while (exchange->phase() == SliceExchange::Phase::kScattering ||
           exchange->phase() == SliceExchange::Phase::kSummed) {
      if (awaiting_gather_.empty()) {
        throw Error(ErrorCode::kInternal, "ordered sum: an exchange awaits its all-gather but is not queued");
      }
      awaiting_gather_.front()->wait_slice_summed();
      start_front_gather();
    }
  }

 private:
  void start_front_gather() {
    awaiting_gather_.front()->start_gather();
    awaiting_gather_.pop_front();
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::string peers_;
  std::deque<SliceExchange*> awaiting_gather_;  // phase 1 started, phase 2 not yet: in start order
};

namespace {

// An ordered sum of any length: one SliceExchange per chunk whose counts and displacements fit MPI's int.
class OrderedSumRequest : public Request {
 public:
  OrderedSumRequest(std::shared_ptr<OrderedSumChannel> channel, int rank, int size, float* data, int64_t count,
                    int64_t max_floats_per_exchange)
      : channel_(std::move(channel)) {
    // Whole multiples of `size` keep size x (largest slice) within an int for the receive displacements.
    const int64_t int_safe = (std::numeric_limits<int>::max() / size) * static_cast<int64_t>(size);
    const int64_t chunk = std::min(max_floats_per_exchange, int_safe);
    for (int64_t begin = 0; begin < count; begin += chunk) {
      const int this_chunk = static_cast<int>(std::min(chunk, count - begin));
      exchanges_.push_back(std::make_unique<SliceExchange>(channel_->comm(), rank, size, data + begin, this_chunk,
                                                      channel_->peers()));
      channel_->enqueue(exchanges_.back().get());
    }
  }
  ~OrderedSumRequest() override {
    // Finishing keeps the other ranks' matching collectives from hanging and the phase-2 order intact. After a
    // TIMEOUT in this process, waiting again would only add another comm.timeout before the error is reported.
    try {
      if (!communication_abandoned()) wait();
    } catch (...) {
    }
    for (auto& exchange : exchanges_) channel_->forget(exchange.get());
  }
  void wait() override {
    for (auto& exchange : exchanges_) {
      channel_->advance_through(exchange.get());
      exchange->wait_done();
    }
  }
  bool test() override {
    channel_->advance();
    bool all_done = true;
    for (auto& exchange : exchanges_) all_done = exchange->test_done() && all_done;
    return all_done;
  }

 private:
  std::shared_ptr<OrderedSumChannel> channel_;
  std::vector<std::unique_ptr<SliceExchange>> exchanges_;
};

}  // namespace

std::shared_ptr<OrderedSumChannel> make_ordered_sum_channel(MPI_Comm group_comm) {
  return std::make_shared<OrderedSumChannel>(group_comm);
}

std::unique_ptr<Request> start_ordered_sum_request(std::shared_ptr<OrderedSumChannel> channel, int rank, int size,
                                                   float* data, int64_t count, int64_t max_floats_per_exchange) {
  return std::make_unique<OrderedSumRequest>(std::move(channel), rank, size, data, count, max_floats_per_exchange);
}

}  // namespace sluice::comm
