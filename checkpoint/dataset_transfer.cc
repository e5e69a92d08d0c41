#include "checkpoint/dataset_transfer.h"

#include <algorithm>
#include <climits>
#include <map>
#include <string>

#include "core/comm/request_wait.h"
#include "core/comm/wait_settings.h"
#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

// Chunks of other ranks' data rank 0 has asked for at once: one being written while the next one arrives.
constexpr size_t kChunksInFlight = 2;

void check_mpi(int code, const char* call) {
  if (code != MPI_SUCCESS) throw Error(ErrorCode::kComm, std::string(call) + " failed in the checkpoint transfer");
}

// Well inside comm.timeout, so that an owner waiting for its turn never mistakes a busy rank 0 for a silent one.
std::chrono::steady_clock::duration progress_interval() {
  const double timeout = comm::wait_settings().timeout_seconds;
  const double seconds = timeout > 0.0 ? std::min(1.0, timeout / 4.0) : 1.0;
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

// After a failure: a receive is cancelled (that completes locally); if MPI still holds it, its buffer is leaked
// rather than freed under MPI (core/comm/request_wait.h). Returns whether the buffer is free to reuse.
bool cancel_receive(MPI_Request& request) {
  if (request == MPI_REQUEST_NULL) return true;
  MPI_Cancel(&request);
  int done = 0;
  MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  return done != 0 || comm::finish_or_abandon(request);
}

// A send in progress; a sub-box of a block goes from the buffer it was packed into, kept until the send completes.
struct Outgoing {
  MPI_Request request = MPI_REQUEST_NULL;
  std::unique_ptr<std::vector<unsigned char>> packed;
};

// After a failure: sends that have not completed are let go (a send cannot be cancelled reliably), and a packed
// buffer MPI may still read is leaked rather than freed under it.
void let_go(std::vector<Outgoing>& sends) {
  for (Outgoing& send : sends) {
    int done = 0;
    if (send.request != MPI_REQUEST_NULL) MPI_Test(&send.request, &done, MPI_STATUS_IGNORE);
    if (send.request != MPI_REQUEST_NULL) {
      MPI_Request_free(&send.request);
      send.packed.release();  // NOLINT: deliberately leaked, MPI may still read it
    }
  }
  sends.clear();
}

void drop_completed(std::vector<Outgoing>& sends) {
  sends.erase(std::remove_if(sends.begin(), sends.end(),
                             [](Outgoing& send) {
                               int done = 0;
                               check_mpi(MPI_Test(&send.request, &done, MPI_STATUS_IGNORE), "MPI_Test");
                               return done != 0;
                             }),
              sends.end());
}

}  // namespace

struct DatasetReceiver::Pending {
  size_t item = 0;
  const ChunkPlan* plan = nullptr;
  DatasetChunk chunk;
  int owner = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  std::unique_ptr<std::vector<unsigned char>> buffer;
  Box region;  // a piece of a block dataset's slab: the sub-box it holds
};

DatasetReceiver::DatasetReceiver(MPI_Comm comm, const std::vector<ManifestItem>& all, size_t chunk_bytes)
    : comm_(comm),
      all_(all),
      chunk_bytes_(chunk_bytes),
      interval_(progress_interval()),
      last_message_(std::chrono::steady_clock::now()) {
  MPI_Comm_size(comm, &size_);
}

DatasetReceiver::~DatasetReceiver() {
  for (Pending& pending : in_flight_) release(pending);
  // Control messages are small, so MPI sends them eagerly and they complete without the receiver; one that has
  // not (after a timeout) is let go and its buffer leaked rather than freed under MPI.
  for (SentControl& sent : sent_) {
    if (comm::finish_or_abandon(sent.request)) continue;
    MPI_Request_free(&sent.request);
    sent.message.release();  // NOLINT: deliberately leaked, MPI may still read it
  }
}

void DatasetReceiver::release(Pending& pending) {
  if (!cancel_receive(pending.request)) pending.buffer.release();  // NOLINT: deliberately leaked (see above)
}

void DatasetReceiver::send_control(int rank, const TransferControl& message) {
  sent_.push_back({std::make_unique<TransferControl>(message), MPI_REQUEST_NULL});
  SentControl& sent = sent_.back();
  check_mpi(
      MPI_Isend(sent.message.get(), sizeof(TransferControl), MPI_BYTE, rank, kTransferControlTag, comm_, &sent.request),
      "MPI_Isend");
}

void DatasetReceiver::sweep_sent() {
  for (auto it = sent_.begin(); it != sent_.end();) {
    int done = 0;
    check_mpi(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    it = done ? sent_.erase(it) : std::next(it);
  }
}

void DatasetReceiver::keep_alive() {
  sweep_sent();
  const auto now = std::chrono::steady_clock::now();
  if (now - last_message_ < interval_) return;
  TransferControl progress;
  progress.kind = TransferControl::kProgress;
  for (int rank = 1; rank < size_; ++rank) send_control(rank, progress);
  last_message_ = now;
}

void DatasetReceiver::receive_all(const Write& write) {
  struct Job {
    size_t item;
    size_t plan;
    DatasetChunk chunk;
  };
  std::vector<std::vector<size_t>> items_of(static_cast<size_t>(size_));
  for (size_t i = 0; i < all_.size(); ++i) {
    if (all_[i].owner_rank > 0 && all_[i].owner_rank < size_)
      items_of[static_cast<size_t>(all_[i].owner_rank)].push_back(i);
  }
  std::vector<ChunkPlan> plans;
  std::vector<Job> jobs;
  for (const std::vector<size_t>& items : items_of) {
    for (size_t i : items) {
      plans.emplace_back(all_[i].dims, data_type_size(all_[i].type), chunk_bytes_);
      for (const DatasetChunk& chunk : plans.back().chunks()) jobs.push_back({i, plans.size() - 1, chunk});
    }
  }

  std::vector<std::unique_ptr<std::vector<unsigned char>>> spare;
  auto post = [&](const Job& job) {
    const ManifestItem& item = all_[job.item];
    const auto element_size = static_cast<int64_t>(data_type_size(item.type));
    const int64_t bytes = job.chunk.elements * element_size;
    in_flight_.push_back({job.item, &plans[job.plan], job.chunk, item.owner_rank, MPI_REQUEST_NULL, nullptr});
    Pending& pending = in_flight_.back();
    if (spare.empty()) spare.push_back(std::make_unique<std::vector<unsigned char>>());
    pending.buffer = std::move(spare.back());
    spare.pop_back();
    pending.buffer->resize(static_cast<size_t>(bytes));
    check_mpi(MPI_Irecv(pending.buffer->data(), static_cast<int>(bytes), MPI_BYTE, pending.owner, kTransferDataTag,
                        comm_, &pending.request),
              "MPI_Irecv");
    send_control(pending.owner, {TransferControl::kSend, static_cast<int64_t>(job.item),
                                 job.chunk.first_element * element_size, bytes});
  };
  size_t next = 0;
  while (next < jobs.size() || !in_flight_.empty()) {
    while (in_flight_.size() < kChunksInFlight && next < jobs.size()) post(jobs[next++]);
    Pending& front = in_flight_.front();
    const ManifestItem& item = all_[front.item];
    const auto element_size = static_cast<int64_t>(data_type_size(item.type));
    const std::string what = "checkpoint data of " + item.path + " (bytes " +
                             std::to_string(front.chunk.first_element * element_size) + " to " +
                             std::to_string((front.chunk.first_element + front.chunk.elements) * element_size) +
                             ") from " + comm::world_ranks_text(comm_, {front.owner});
    comm::wait_for(front.request, what, [this] { keep_alive(); });
    write(front.item, *front.plan, front.chunk, front.buffer->data());
    keep_alive();
    spare.push_back(std::move(front.buffer));
    in_flight_.pop_front();
  }
}

void DatasetReceiver::receive_blocks(const Snapshot& mine, const Write& write) {
  std::vector<unsigned char> slab;
  for (size_t i = 0; i < all_.size(); ++i) {
    if (all_[i].owner_rank != kBlockOwners) continue;
    const size_t element_size = data_type_size(all_[i].type);
    const ChunkPlan plan(all_[i].dims, element_size, chunk_bytes_);
    for (const DatasetChunk& chunk : plan.chunks()) {
      const Hyperslab hyperslab = plan.hyperslab(chunk);
      const Box slab_box{std::vector<int64_t>(hyperslab.start.begin(), hyperslab.start.end()),
                         std::vector<int64_t>(hyperslab.count.begin(), hyperslab.count.end())};
      slab.resize(static_cast<size_t>(chunk.elements) * element_size);
      assemble_slab(i, slab_box, mine, slab.data());
      write(i, plan, chunk, slab.data());
      keep_alive();
    }
  }
}

// One slab of block dataset all_[item]: rank 0's own part copied, every other owner's part asked for (all at once)
// and copied in as it arrives. The pieces tile the slab, so they hold at most one more slab's bytes.
void DatasetReceiver::assemble_slab(size_t item, const Box& slab_box, const Snapshot& mine, unsigned char* slab) {
  const ManifestItem& dataset = all_[item];
  const size_t element_size = data_type_size(dataset.type);
  for (const OwnedBox& owned : dataset.boxes) {
    const Box block{owned.offset, owned.extent};
    Box region;
    if (!intersect_boxes(slab_box, block, region)) continue;
    if (owned.rank == 0) {
      const auto own = std::find_if(mine.entries.begin(), mine.entries.end(),
                                    [&](const Entry& entry) { return entry.path == dataset.path; });
      if (own == mine.entries.end()) {
        throw Error(ErrorCode::kInternal, "checkpoint block of " + dataset.path + " is missing on rank 0");
      }
      copy_box(own->values(), block, slab, slab_box, region, element_size);
      continue;
    }
    const int64_t bytes = box_volume(region) * static_cast<int64_t>(element_size);
    in_flight_.push_back({item, nullptr, {}, owned.rank, MPI_REQUEST_NULL,
                          std::make_unique<std::vector<unsigned char>>(static_cast<size_t>(bytes)), region});
    Pending& pending = in_flight_.back();
    check_mpi(MPI_Irecv(pending.buffer->data(), static_cast<int>(bytes), MPI_BYTE, owned.rank, kTransferDataTag,
                        comm_, &pending.request),
              "MPI_Irecv");
    TransferControl ask{TransferControl::kSendBox, static_cast<int64_t>(item), 0, bytes};
    ask.box_dims = static_cast<int64_t>(region.offset.size());
    std::copy(region.offset.begin(), region.offset.end(), ask.box_offset);
    std::copy(region.extent.begin(), region.extent.end(), ask.box_extent);
    send_control(owned.rank, ask);
  }
  while (!in_flight_.empty()) {
    Pending& front = in_flight_.front();
    comm::wait_for(front.request,
                   "checkpoint data of " + dataset.path + " (a block's part) from " +
                       comm::world_ranks_text(comm_, {front.owner}),
                   [this] { keep_alive(); });
    copy_box(front.buffer->data(), front.region, slab, slab_box, front.region, element_size);
    in_flight_.pop_front();
  }
}

void DatasetReceiver::finish(bool wrote_everything) {
  TransferControl done;
  done.kind = TransferControl::kDone;
  done.item = wrote_everything ? 1 : 0;
  for (int rank = 1; rank < size_; ++rank) send_control(rank, done);
  last_message_ = std::chrono::steady_clock::now();
  sweep_sent();
}

namespace {

// Starts sending the chunk rank 0 asked for, straight from the entry's memory.
MPI_Request send_chunk(MPI_Comm comm, const std::vector<ManifestItem>& all,
                       const std::map<std::string, const Entry*>& mine, int rank, const TransferControl& message) {
  const Entry* entry = nullptr;
  if (message.item >= 0 && static_cast<size_t>(message.item) < all.size() &&
      all[static_cast<size_t>(message.item)].owner_rank == rank) {
    const auto found = mine.find(all[static_cast<size_t>(message.item)].path);
    if (found != mine.end()) entry = found->second;
  }
  if (entry == nullptr || message.offset < 0 || message.bytes < 0 || message.bytes > INT_MAX ||
      static_cast<uint64_t>(message.offset) + static_cast<uint64_t>(message.bytes) > entry->value_bytes()) {
    throw Error(ErrorCode::kInternal, "checkpoint writer asked rank " + std::to_string(rank) + " for dataset #" +
                                          std::to_string(message.item) + " bytes " + std::to_string(message.offset) +
                                          " + " + std::to_string(message.bytes) + ", which it does not hold");
  }
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Isend(static_cast<const unsigned char*>(entry->values()) + message.offset,
                      static_cast<int>(message.bytes), MPI_BYTE, 0, kTransferDataTag, comm, &request),
            "MPI_Isend");
  return request;
}

// Starts sending the sub-box of a block dataset rank 0 asked for, packed from this rank's block into `packed`.
MPI_Request send_box(MPI_Comm comm, const std::vector<ManifestItem>& all,
                     const std::map<std::string, const Entry*>& mine, int rank, const TransferControl& message,
                     std::vector<unsigned char>& packed) {
  const Entry* entry = nullptr;
  Box region;
  if (message.item >= 0 && static_cast<size_t>(message.item) < all.size() && message.box_dims >= 0 &&
      message.box_dims <= static_cast<int64_t>(kMaxBoxDims)) {
    const auto found = mine.find(all[static_cast<size_t>(message.item)].path);
    if (found != mine.end() && found->second->is_block()) entry = found->second;
    region.offset.assign(message.box_offset, message.box_offset + message.box_dims);
    region.extent.assign(message.box_extent, message.box_extent + message.box_dims);
  }
  const Box block = entry == nullptr ? Box{} : Box{entry->box_offset, entry->dims};
  const size_t element_size = entry == nullptr ? 1 : data_type_size(entry->type);
  if (entry == nullptr || !box_contains(block, region) || message.bytes > INT_MAX ||
      message.bytes != box_volume(region) * static_cast<int64_t>(element_size)) {
    throw Error(ErrorCode::kInternal, "checkpoint writer asked rank " + std::to_string(rank) + " for a box of dataset #" +
                                          std::to_string(message.item) + " that its block does not hold");
  }
  packed.resize(static_cast<size_t>(message.bytes));
  copy_box(entry->values(), block, packed.data(), region, region, element_size);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Isend(packed.data(), static_cast<int>(message.bytes), MPI_BYTE, 0, kTransferDataTag, comm, &request),
            "MPI_Isend");
  return request;
}

// Waits for rank 0's next control message (bounded by comm.timeout).
TransferControl next_control(MPI_Comm comm, const std::string& what) {
  auto message = std::make_unique<TransferControl>();
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Irecv(message.get(), sizeof(TransferControl), MPI_BYTE, 0, kTransferControlTag, comm, &request),
            "MPI_Irecv");
  try {
    comm::wait_for(request, what);
  } catch (...) {
    if (!cancel_receive(request)) message.release();  // NOLINT: deliberately leaked, MPI may still write here
    throw;
  }
  return *message;
}

}  // namespace

void send_datasets_to_writer(MPI_Comm comm, const std::vector<ManifestItem>& all, const Snapshot& mine) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::map<std::string, const Entry*> by_path;
  for (const Entry& entry : mine.entries) by_path[entry.path] = &entry;
  const std::string writer = comm::world_ranks_text(comm, {0});
  const std::string what = "the checkpoint writer's next message (progress, request or done) from " + writer;
  std::vector<Outgoing> sends;
  try {
    for (;;) {
      const TransferControl message = next_control(comm, what);
      if (message.kind == TransferControl::kProgress) continue;
      if (message.kind == TransferControl::kSend) {
        sends.push_back({send_chunk(comm, all, by_path, rank, message), nullptr});
        drop_completed(sends);
        continue;
      }
      if (message.kind == TransferControl::kSendBox) {
        auto packed = std::make_unique<std::vector<unsigned char>>();
        const MPI_Request request = send_box(comm, all, by_path, rank, message, *packed);
        sends.push_back({request, std::move(packed)});
        drop_completed(sends);
        continue;
      }
      if (message.kind != TransferControl::kDone) {
        throw Error(ErrorCode::kInternal, "unknown checkpoint transfer message kind " + std::to_string(message.kind));
      }
      if (message.item == 0) break;  // rank 0 failed; the agreement after the write says why
      for (Outgoing& send : sends) comm::wait_for(send.request, "checkpoint data to " + writer);
      return;
    }
  } catch (...) {
    let_go(sends);
    throw;
  }
  let_go(sends);
}

}  // namespace sluice::checkpoint
