// Point-to-point transport between the ranks of one pipeline. The executor moves activations and
// activation-gradients only through this interface, so an NCCL (device-memory) transport is a new file
// implementing it, not an edit of the executor.
#pragma once

#include <cstdint>
#include <memory>

namespace sluice::comm {

// A started transfer. The buffer it was started on must stay alive and untouched until wait() returns
// or test() has returned true.
class Request {
 public:
  virtual ~Request() = default;
  virtual void wait() = 0;
  virtual bool test() = 0;  // true once complete; never blocks
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;  // this process's pipeline rank
  virtual int size() const = 0;  // pipeline ranks
  // Non-blocking send/receive of `count` floats to/from pipeline rank `peer`. Tags identify
  // (stage, micro-batch, direction) so any number of transfers may be in flight in any order.
  virtual std::unique_ptr<Request> isend(const float* data, int64_t count, int peer, int tag) = 0;
  virtual std::unique_ptr<Request> irecv(float* data, int64_t count, int peer, int tag) = 0;
  // Whether receives may be posted ahead of their place in the schedule. MPI matches by tag and completes
  // transfers in any order, so early receives only cost buffer memory. A transport that runs its transfers one
  // after another in posting order, each blocking until its partner runs (NCCL on one stream), must see them in
  // the schedule's order: the lowering proves that order deadlock-free with blocking send/recv, while a receive
  // posted ahead of an earlier send can wait forever for data that send's partner needs first. The default is
  // the order that is safe for every transport (a wrapper that forgets to forward this only loses overlap).
  virtual bool receives_may_be_posted_early() const { return false; }
  // The largest tag isend/irecv carry. The executor refuses, when it is built, a schedule whose tags go beyond
  // it; the answer must be the same on every rank, so that every rank refuses alike (Trainer::start counts on
  // it). The default is the bound every MPI promises (MPI_TAG_UB is at least 32767); a transport that carries
  // more says so.
  virtual int max_tag() const { return 32767; }
};

}  // namespace sluice::comm
