// A single-rank NCCL communicator (one GPU): send/receive to this rank itself through NcclTransport, in both
// posting orders, ncclAllReduce, and the data-parallel NcclOverlappedSum ordered against compute on the shared
// communication stream. Multi-rank NCCL needs one GPU per rank and is not exercised here (its posting order is,
// on the CPU: tests/runtime/executor_posting_order_test.cc).
// Run under mpirun (mpi_test, np = 1); skips with the reason when there is no GPU.
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "core/comm/nccl_communicator.h"
#include "core/comm/nccl_overlapped_sum.h"
#include "core/comm/nccl_transport.h"
#include "core/common/error.h"
#include "kernels/cuda/cuda_backend.h"
#include "tests/cuda/cuda_test_support.h"

namespace sluice::comm {
namespace {

class SingleRankNccl : public ::testing::Test {
 protected:
  void SetUp() override {
    SLUICE_SKIP_WITHOUT_CUDA_DEVICE();
    backend_ = std::make_unique<kernels::CudaBackend>(0);
    communicator_ = std::make_unique<NcclCommunicator>(MPI_COMM_WORLD, 0);
    transport_ = std::make_unique<NcclTransport>(*communicator_, backend_->stream(), backend_->communication_stream());
  }

  std::vector<float> download(const kernels::Tensor& t) {
    std::vector<float> values(static_cast<size_t>(t.size()));
    backend_->to_host(t, values.data());
    return values;
  }

  std::unique_ptr<kernels::CudaBackend> backend_;
  std::unique_ptr<NcclCommunicator> communicator_;
  std::unique_ptr<NcclTransport> transport_;
};

std::vector<float> ramp(int count, float start) {
  std::vector<float> values(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) values[static_cast<size_t>(i)] = start + static_cast<float>(i);
  return values;
}

TEST_F(SingleRankNccl, SendToItselfArrivesWhicheverSideIsPostedFirst) {
  ASSERT_EQ(transport_->size(), 1);
  const std::vector<float> first = ramp(1000, 1.0f), second = ramp(1000, -500.0f);
  kernels::Tensor source1 = backend_->from_host(1, 1000, first.data());
  kernels::Tensor source2 = backend_->from_host(1, 1000, second.data());
  kernels::Tensor target1 = backend_->zeros(1, 1000), target2 = backend_->zeros(1, 1000);

  auto send1 = transport_->isend(source1.data(), 1000, 0, 11);  // send first
  auto recv1 = transport_->irecv(target1.data(), 1000, 0, 11);
  auto recv2 = transport_->irecv(target2.data(), 1000, 0, 12);  // receive first, as the executor's look-ahead does
  auto send2 = transport_->isend(source2.data(), 1000, 0, 12);
  for (Request* r : {recv1.get(), recv2.get(), send1.get(), send2.get()}) r->wait();
  EXPECT_EQ(download(target1), first);
  EXPECT_EQ(download(target2), second);
}

TEST_F(SingleRankNccl, WaitingOnASelfReceiveWithoutItsSendIsAnErrorNotAHang) {
  kernels::Tensor target = backend_->zeros(1, 8);
  auto recv = transport_->irecv(target.data(), 8, 0, 42);
  try {
    recv->wait();
    FAIL() << "an unmatched self-receive was waited on without error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInternal);
    EXPECT_NE(std::string(e.what()).find("tag 42"), std::string::npos) << e.what();
  }
}

TEST_F(SingleRankNccl, PeerOutsideTheCommunicatorIsRejected) {
  kernels::Tensor source = backend_->zeros(1, 8);
  EXPECT_THROW(transport_->isend(source.data(), 8, 1, 0), Error);
}

TEST_F(SingleRankNccl, AllReduceOverOneRankLeavesTheValues) {
  const std::vector<float> values = ramp(4096, 0.5f);
  kernels::Tensor data = backend_->from_host(1, 4096, values.data());
  communicator_->all_reduce_sum(data.data(), data.size(), backend_->stream());
  EXPECT_EQ(download(data), values);
}

TEST_F(SingleRankNccl, AsksForTransfersInScheduleOrder) {
  // NCCL runs one stream's transfers in issue order: early receives could deadlock two neighbours.
  EXPECT_FALSE(transport_->receives_may_be_posted_early());
}

// fill -> sum -> scale queued without a host synchronisation ends with fill * scale: the sum runs and leaves a
// single rank's values. (Over one rank an in-place sum changes nothing, so this cannot show the ordering against
// compute; that needs two GPUs.)
TEST_F(SingleRankNccl, OverlappedSumOverOneRankRunsAndLeavesTheValues) {
  NcclOverlappedSum sum(*communicator_, backend_->stream(), backend_->communication_stream());
  kernels::Tensor a = backend_->zeros(64, 1024), b = backend_->zeros(1, 7);
  backend_->fill(3.0f, a);
  backend_->fill(-2.0f, b);
  sum.start({{a.data(), a.size()}, {b.data(), b.size()}});
  sum.finish();
  backend_->scale(0.5f, a);
  backend_->scale(0.5f, b);
  EXPECT_EQ(download(a), std::vector<float>(64 * 1024, 1.5f));
  EXPECT_EQ(download(b), std::vector<float>(7, -1.0f));
  sum.finish();  // nothing pending: a no-op
}

}  // namespace
}  // namespace sluice::comm
