// The preemption mechanism: signals only set a flag; stopping is a collective decision at a step boundary.
#include "core/runtime/preemption.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <memory>
#include <string>
#include <vector>

namespace sluice::runtime {
namespace {

// A stand-in world: records the flag each call contributed and answers as if the other ranks voted
// `peers_want_stop`, so the test sees both what agree_to_stop sends and what it does with the answer.
class RecordingGroup : public comm::Group {
 public:
  explicit RecordingGroup(bool peers_want_stop) : peers_want_stop_(peers_want_stop) {}
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::unique_ptr<comm::Request> start_ordered_sum(float*, int64_t) override { return nullptr; }
  void ordered_sum(double*, int64_t) override {}
  std::vector<double> all_gather(const double*, int64_t) override { return {}; }
  std::vector<std::string> gather_text(const std::string&, int) override { return {}; }
  void broadcast(float*, int64_t, int) override {}
  bool any(bool flag) override {
    contributed.push_back(flag);
    return flag || peers_want_stop_;
  }
  void barrier() override {}
  std::vector<bool> contributed;

 private:
  bool peers_want_stop_;
};

class PreemptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    install_preemption_handlers();
    clear_preemption_request();
  }
  void TearDown() override { clear_preemption_request(); }
};

TEST_F(PreemptionTest, NoSignalNoRequest) { EXPECT_FALSE(preemption_requested()); }

TEST_F(PreemptionTest, Sigusr1SetsTheFlagAndTheProcessCarriesOn) {
  ASSERT_EQ(raise(SIGUSR1), 0);
  // Reaching this line at all shows the default action (terminate) was replaced.
  EXPECT_TRUE(preemption_requested());
}

TEST_F(PreemptionTest, SigtermSetsTheFlagAndTheProcessCarriesOn) {
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_TRUE(preemption_requested());
}

TEST_F(PreemptionTest, HandlerWritesNothingAndLeavesErrnoAlone) {
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  errno = 12345;
  raise(SIGUSR1);
  const int errno_after = errno;
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(errno_after, 12345);
  EXPECT_TRUE(preemption_requested());
}

TEST_F(PreemptionTest, HandlersRestartInterruptedCallsAndBlockNothingExtra) {
  for (int signal_number : {SIGUSR1, SIGTERM}) {
    struct sigaction current {};
    ASSERT_EQ(sigaction(signal_number, nullptr, &current), 0);
    EXPECT_NE(current.sa_handler, SIG_DFL) << "signal " << signal_number;
    EXPECT_NE(current.sa_handler, SIG_IGN) << "signal " << signal_number;
    EXPECT_TRUE(current.sa_flags & SA_RESTART) << "signal " << signal_number;
    EXPECT_FALSE(current.sa_flags & SA_RESETHAND) << "a second warning must not kill the job";
  }
}

TEST_F(PreemptionTest, InstallingTwiceKeepsOneBehaviour) {
  install_preemption_handlers();
  raise(SIGUSR1);
  EXPECT_TRUE(preemption_requested());
  clear_preemption_request();
  EXPECT_FALSE(preemption_requested());
}

TEST_F(PreemptionTest, AgreeToStopContributesTheLocalFlag) {
  RecordingGroup quiet_world(/*peers_want_stop=*/false);
  EXPECT_FALSE(agree_to_stop(quiet_world));
  raise(SIGUSR1);
  EXPECT_TRUE(agree_to_stop(quiet_world));
  EXPECT_EQ(quiet_world.contributed, (std::vector<bool>{false, true}));
}

TEST_F(PreemptionTest, AgreeToStopFollowsAPeerThatWasSignalled) {
  RecordingGroup signalled_peer(/*peers_want_stop=*/true);
  EXPECT_TRUE(agree_to_stop(signalled_peer));
  EXPECT_EQ(signalled_peer.contributed, (std::vector<bool>{false}));
  EXPECT_FALSE(preemption_requested()) << "a peer's signal must not fake a local one";
}

TEST(PreemptedExitCode, IsExTempfail) {
  // The sbatch templates test `-eq 75`; sysexits.h's EX_TEMPFAIL is the agreed meaning.
  EXPECT_EQ(kPreemptedExitCode, 75);
}

}  // namespace
}  // namespace sluice::runtime
