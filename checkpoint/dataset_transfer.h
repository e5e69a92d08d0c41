// How the other ranks' datasets reach rank 0, the one rank that writes a checkpoint file (checkpoint/save.cc).
// Point-to-point and receiver-driven, so that rank 0 holds at most two chunks of other ranks' data at a time and
// every wait is Sluice's bounded one (core/comm/request_wait.h):
//  - rank 0 walks the other ranks' datasets in order, cut into chunks (dataset_chunks.h); for each it posts the
//    receive, then asks the owner for it ("send": dataset index, byte offset, byte count), two chunks in flight;
//  - an owner waits for rank 0's control messages and sends each chunk it is asked for straight from its Snapshot's
//    memory (no copy);
//  - a dataset several ranks own by blocks (Entry::global_dims) comes last: rank 0 walks it slab by slab (the same
//    chunks), asks each owner whose block a slab overlaps for that sub-box ("send box"; the owner packs it), and
//    hands the assembled slab on: it holds the slab and its pieces, at most two chunks;
//  - an owner whose turn has not come, or who has sent everything, keeps waiting for control messages: rank 0 sends
//    a "progress" message at least every second (every comm.timeout / 4 if that is shorter) between chunks, also
//    while it waits for a chunk, and "done" when it needs nothing more. Each of its waits is bounded by
//    comm.timeout, so however long the whole file takes to write, a silent rank 0 is noticed within one timeout.
// A wait that times out throws Error(kTimeout) naming the silent rank; the caller takes it to its agreement.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <vector>

#include "checkpoint/dataset_chunks.h"
#include "checkpoint/manifest.h"
#include "checkpoint/snapshot.h"

namespace sluice::checkpoint {

// Tags the transfer reserves on the save's communicator, beside the agreement's (core/comm/agreement.h). The save
// runs between two agreements, when no other Sluice message is in flight on that communicator.
constexpr int kTransferControlTag = 32763;
constexpr int kTransferDataTag = 32764;

// The most dimensions a block dataset may have ([held, C, D, H, W] has 5).
constexpr size_t kMaxBoxDims = 8;

// One control message from rank 0 to another rank.
struct TransferControl {
  int64_t kind = 0;    // kProgress, kSend, kSendBox or kDone
  int64_t item = 0;    // kSend(Box): index into the merged manifest; kDone: 1 when rank 0 wrote everything, else 0
  int64_t offset = 0;  // kSend: first byte of the dataset's values to send
  int64_t bytes = 0;   // kSend: how many; kSendBox: the sub-box's bytes
  int64_t box_dims = 0;                      // kSendBox: the dataset's rank
  int64_t box_offset[kMaxBoxDims] = {};      // kSendBox: the sub-box of the dataset, inside the owner's block
  int64_t box_extent[kMaxBoxDims] = {};
  static constexpr int64_t kProgress = 0;
  static constexpr int64_t kSend = 1;
  static constexpr int64_t kDone = 2;
  static constexpr int64_t kSendBox = 3;
};

// Rank 0's side. `all` is the merged manifest (every rank's items, owner_rank set), the same on every rank.
class DatasetReceiver {
 public:
  // Called with each received chunk: the dataset's index in `all`, the chunk, and its bytes.
  using Write = std::function<void(size_t item, const ChunkPlan& plan, const DatasetChunk& chunk, const void* bytes)>;

  DatasetReceiver(MPI_Comm comm, const std::vector<ManifestItem>& all, size_t chunk_bytes);
  // Releases what is still in flight (after a failure): cancels receives, lets control sends go.
  ~DatasetReceiver();
  DatasetReceiver(const DatasetReceiver&) = delete;
  DatasetReceiver& operator=(const DatasetReceiver&) = delete;

  // Sends "progress" to every other rank when the last message is older than the interval. Cheap: call it often.
  void keep_alive();
  // Receives every dataset that another rank owns, chunk by chunk in manifest order grouped by owner, and hands
  // each to `write`. Throws Error(kTimeout) naming the owner of a chunk that does not arrive within comm.timeout.
  void receive_all(const Write& write);
  // Assembles every dataset several ranks own by blocks (owner_rank kBlockOwners) slab by slab in row-major order,
  // taking rank 0's own boxes from `mine` and the others' sub-boxes from their owners, and hands each slab to
  // `write`. Throws Error(kTimeout) naming the owner of a piece that does not arrive within comm.timeout.
  void receive_blocks(const Snapshot& mine, const Write& write);
  // Tells every other rank that rank 0 needs nothing more (`wrote_everything`: whether it succeeded).
  void finish(bool wrote_everything);

 private:
  struct Pending;
  void assemble_slab(size_t item, const Box& slab_box, const Snapshot& mine, unsigned char* slab);
  void send_control(int rank, const TransferControl& message);
  void sweep_sent();
  void release(Pending& pending);

  MPI_Comm comm_;
  int size_ = 1;
  const std::vector<ManifestItem>& all_;
  size_t chunk_bytes_;
  std::chrono::steady_clock::duration interval_;
  std::chrono::steady_clock::time_point last_message_;
  struct SentControl {
    std::unique_ptr<TransferControl> message;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::list<SentControl> sent_;
  std::list<Pending> in_flight_;
};

// Every rank but 0: answers rank 0's requests for the chunks of this rank's datasets from `mine`, until rank 0 says
// it is done. Throws Error(kTimeout) naming rank 0 when no control message arrives within comm.timeout.
void send_datasets_to_writer(MPI_Comm comm, const std::vector<ManifestItem>& all, const Snapshot& mine);

}  // namespace sluice::checkpoint
