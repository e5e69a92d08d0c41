#include "core/comm/staged_transport.h"

#include <string>
#include <utility>

#include "core/common/error.h"

namespace sluice::comm {
namespace {

class StagedRequest : public Request {
 public:
  // `destination` is the device buffer a receive lands in; null for a send.
  StagedRequest(std::unique_ptr<kernels::StagingBuffer> buffer, int64_t count, float* destination,
                kernels::HostStaging& staging)
      : buffer_(std::move(buffer)), count_(count), destination_(destination), staging_(staging) {}

  // An abandoned request (error path): host_request_ is destroyed first (declared last), which cancels an
  // unfinished receive. An unfinished send cannot be cancelled, only released (see MpiRequest), and MPI may
  // still read its buffer afterwards, so that buffer is deliberately leaked rather than freed under MPI.
  ~StagedRequest() override {
    if (finished_ || destination_ != nullptr || host_request_ == nullptr) return;
    bool done = false;
    try {
      done = host_request_->test();
    } catch (...) {
    }
    if (!done) static_cast<void>(buffer_.release());
  }

  void start(std::unique_ptr<Request> host_request) { host_request_ = std::move(host_request); }
  float* buffer() { return buffer_->data(); }

  void wait() override {
    if (finished_) return;
    host_request_->wait();
    finish();
  }

  bool test() override {
    if (finished_) return true;
    if (!host_request_->test()) return false;
    finish();
    return true;
  }

 private:
  void finish() {
    if (destination_ != nullptr) staging_.copy_to_device(buffer_->data(), destination_, count_);
    finished_ = true;
  }

  std::unique_ptr<kernels::StagingBuffer> buffer_;
  int64_t count_;
  float* destination_;
  kernels::HostStaging& staging_;
  std::unique_ptr<Request> host_request_;  // after buffer_: destroyed first
  bool finished_ = false;
};

void check_count(const char* op, int64_t count) {
  if (count < 0) {
    throw Error(ErrorCode::kInvalidArgument, std::string("staged ") + op + ": negative count " + std::to_string(count));
  }
}

}  // namespace

StagedTransport::StagedTransport(Transport& host_transport, kernels::HostStaging& staging)
    : host_(host_transport), staging_(staging) {}

std::unique_ptr<Request> StagedTransport::isend(const float* data, int64_t count, int peer, int tag) {
  check_count("isend", count);
  auto request = std::make_unique<StagedRequest>(staging_.allocate(count), count, nullptr, staging_);
  staging_.copy_to_host(data, request->buffer(), count);
  request->start(host_.isend(request->buffer(), count, peer, tag));
  return request;
}

std::unique_ptr<Request> StagedTransport::irecv(float* data, int64_t count, int peer, int tag) {
  check_count("irecv", count);
  auto request = std::make_unique<StagedRequest>(staging_.allocate(count), count, data, staging_);
  request->start(host_.irecv(request->buffer(), count, peer, tag));
  return request;
}

}  // namespace sluice::comm
