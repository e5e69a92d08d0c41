// StagedTransport over the MPI transport, on the CPU. The staging used here encodes what it copies to the
// "host" (adds an offset) and decodes what it copies back, so a received value is right only if it went
// through copy_to_host on the sender AND copy_to_device on the receiver exactly once: a transport that handed
// the caller's pointer straight to MPI, or skipped or repeated a copy, gets wrong values. Run with 2 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <vector>

#include "core/comm/mpi_transport.h"
#include "core/comm/staged_transport.h"
#include "core/common/error.h"
#include "kernels/host_staging.h"
#include "tests/mpi_world.h"

namespace sluice::comm {
namespace {

using sluice::testing::world_rank;

constexpr float kOffset = 4096.0f;  // integers below 2^24 stay exact through +/- kOffset

class EncodingStaging : public kernels::HostStaging {
 public:
  std::unique_ptr<kernels::StagingBuffer> allocate(int64_t count) override {
    ++allocations;
    return kernels::host_memory_staging().allocate(count);
  }
  void copy_to_host(const float* source, float* destination, int64_t count) override {
    ++to_host;
    for (int64_t i = 0; i < count; ++i) destination[i] = source[i] + kOffset;
  }
  void copy_to_device(const float* source, float* destination, int64_t count) override {
    ++to_device;
    for (int64_t i = 0; i < count; ++i) destination[i] = source[i] - kOffset;
  }
  int allocations = 0, to_host = 0, to_device = 0;
};

std::vector<float> values_of(int rank, int message, int count) {
  std::vector<float> values(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) values[static_cast<size_t>(i)] = 1000.0f * rank + 100.0f * message + i % 97;
  return values;
}

TEST(StagedTransport, EveryMessageIsCopiedOutAndBackExactlyOnce) {
  MpiTransport host(MPI_COMM_WORLD);
  ASSERT_EQ(host.size(), 2) << "run with 2 ranks";
  EncodingStaging staging;
  StagedTransport transport(host, staging);
  EXPECT_EQ(transport.rank(), world_rank());
  EXPECT_EQ(transport.size(), 2);
  const int me = transport.rank();
  const int peer = 1 - me;
  constexpr int kMessages = 4;
  constexpr int kCount = 3000;
  std::vector<std::vector<float>> incoming(kMessages, std::vector<float>(kCount, -1.0f));
  std::vector<std::unique_ptr<Request>> receives, sends;
  for (int m = 0; m < kMessages; ++m) receives.push_back(transport.irecv(incoming[m].data(), kCount, peer, m));
  for (int m = kMessages - 1; m >= 0; --m) {  // sent in reverse: tags, not order, pair them up
    std::vector<float> outgoing = values_of(me, m, kCount);
    sends.push_back(transport.isend(outgoing.data(), kCount, peer, m));
    // The send copied the data out before returning: the caller may reuse its buffer at once.
    std::fill(outgoing.begin(), outgoing.end(), -7.0f);
  }
  // Completion through test() for even messages, wait() for odd ones: both must copy back exactly once.
  for (int m = 0; m < kMessages; m += 2) {
    while (!receives[m]->test()) {
    }
    EXPECT_TRUE(receives[m]->test());  // a second test() of a finished request copies nothing again
  }
  for (int m = 1; m < kMessages; m += 2) receives[m]->wait();
  for (auto& r : receives) r->wait();  // waiting again after completion is a no-op
  for (auto& s : sends) s->wait();
  for (int m = 0; m < kMessages; ++m) EXPECT_EQ(incoming[m], values_of(peer, m, kCount)) << "message " << m;
  EXPECT_EQ(staging.allocations, 2 * kMessages);
  EXPECT_EQ(staging.to_host, kMessages);
  EXPECT_EQ(staging.to_device, kMessages);
}

TEST(StagedTransport, EmptyMessagesAndSelfSendsWork) {
  MpiTransport host(MPI_COMM_WORLD);
  StagedTransport transport(host, kernels::host_memory_staging());
  const int me = transport.rank();
  std::vector<float> out = values_of(me, 9, 10), in(10, 0.0f);
  float unused = 0.0f;
  auto empty_recv = transport.irecv(&unused, 0, me, 20);
  auto self_recv = transport.irecv(in.data(), 10, me, 21);
  auto empty_send = transport.isend(&unused, 0, me, 20);
  auto self_send = transport.isend(out.data(), 10, me, 21);
  empty_recv->wait();
  self_recv->wait();
  empty_send->wait();
  self_send->wait();
  EXPECT_EQ(in, out);
}

// Counts the staging copies but copies plainly: what goes on the wire is the caller's floats.
class CountingStaging : public kernels::HostStaging {
 public:
  std::unique_ptr<kernels::StagingBuffer> allocate(int64_t count) override {
    return kernels::host_memory_staging().allocate(count);
  }
  void copy_to_host(const float* source, float* destination, int64_t count) override {
    ++to_host;
    kernels::host_memory_staging().copy_to_host(source, destination, count);
  }
  void copy_to_device(const float* source, float* destination, int64_t count) override {
    ++to_device;
    kernels::host_memory_staging().copy_to_device(source, destination, count);
  }
  int to_host = 0, to_device = 0;
};

// A mixed pipeline (device: [cuda, cpu]) puts a staged rank (its cuda stage) next to an mpi rank (its cpu
// stage). Staged sends exactly the MPI messages an mpi rank posts, so the two must pair up both ways, by tag,
// whatever the sizes and order. Rank 0 is staged, rank 1 plain MPI.
TEST(StagedTransport, AStagedRankAndAnMpiRankTalkToEachOther) {
  MpiTransport host(MPI_COMM_WORLD);
  ASSERT_EQ(host.size(), 2) << "run with 2 ranks";
  CountingStaging staging;
  StagedTransport staged(host, staging);
  const int me = host.rank();
  Transport& transport = me == 0 ? static_cast<Transport&>(staged) : host;
  const int peer = 1 - me;
  const std::vector<int> counts = {1, 5000, 17, 2};
  std::vector<std::vector<float>> incoming;
  std::vector<std::unique_ptr<Request>> receives, sends;
  for (int m = 0; m < static_cast<int>(counts.size()); ++m) {
    incoming.emplace_back(static_cast<size_t>(counts[m]), -1.0f);
    receives.push_back(transport.irecv(incoming[m].data(), counts[m], peer, 40 + m));
  }
  std::vector<std::vector<float>> outgoing;
  for (int m = 0; m < static_cast<int>(counts.size()); ++m) outgoing.push_back(values_of(me, m, counts[m]));
  for (int m = static_cast<int>(counts.size()) - 1; m >= 0; --m) {
    sends.push_back(transport.isend(outgoing[m].data(), counts[m], peer, 40 + m));
  }
  for (auto& r : receives) r->wait();
  for (auto& s : sends) s->wait();
  for (int m = 0; m < static_cast<int>(counts.size()); ++m) {
    EXPECT_EQ(incoming[m], values_of(peer, m, counts[m])) << "message " << m << " on rank " << me;
  }
  EXPECT_EQ(staging.to_host, me == 0 ? 4 : 0);
  EXPECT_EQ(staging.to_device, me == 0 ? 4 : 0);
}

TEST(StagedTransport, NegativeCountIsRefusedWithTheOpNamed) {
  MpiTransport host(MPI_COMM_WORLD);
  StagedTransport transport(host, kernels::host_memory_staging());
  float value = 0.0f;
  try {
    transport.isend(&value, -3, 0, 0);
    FAIL() << "a negative count was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(error.what()).find("staged isend: negative count -3"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace sluice::comm
