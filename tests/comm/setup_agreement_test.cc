// The set-up agreement (core/comm/setup_agreement.h) with scripted set-ups on 4 ranks: a set-up that fails on
// one rank while the others would wait for it forever (they must abort, once, and everybody returns false),
// failures on several ranks, successes at different speeds, and back-to-back agreements that stay independent
// (each runs on its own duplicate communicator, so a notice cannot reach the next one). A hang fails the test's
// time limit.
#include "core/comm/setup_agreement.h"
#include "tests/mpi_world.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <functional>
#include <set>

namespace sluice::comm {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

// A set-up that finishes after `polls_to_done` polls, fails after `polls_to_fail` (if >= 0), and otherwise stays
// in progress until aborted, as an NCCL init waiting for a rank that never joins does.
struct ScriptedSetup {
  int polls_to_done = -1;
  int polls_to_fail = -1;
  int polls = 0;
  int aborts = 0;

  SetupState poll() {
    ++polls;
    if (aborts > 0) ADD_FAILURE() << "polled after abort";
    if (polls_to_fail >= 0 && polls > polls_to_fail) return SetupState::kFailed;
    if (polls_to_done >= 0 && polls > polls_to_done) return SetupState::kDone;
    return SetupState::kInProgress;
  }

  bool run() {
    return agree_on_setup(MPI_COMM_WORLD, [this] { return poll(); }, [this] { ++aborts; });
  }
};

// Whether every rank got `value`.
bool everywhere(bool value) {
  int mine = value ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

TEST(SetupAgreement, SuccessEverywhereAtDifferentSpeedsIsTrueEverywhere) {
  ScriptedSetup setup;
  setup.polls_to_done = 3 * world_rank();
  EXPECT_TRUE(everywhere(setup.run()));
  EXPECT_EQ(setup.aborts, 0);
}

TEST(SetupAgreement, OneFailureMakesTheWaitingRanksAbortOnceAndAllReturnFalse) {
  ASSERT_GE(world_size(), 2);
  ScriptedSetup setup;
  const bool failing = world_rank() == 1;
  if (failing) setup.polls_to_fail = 5;  // the others never finish on their own: they must hear of it
  EXPECT_TRUE(everywhere(!setup.run()));
  EXPECT_EQ(setup.aborts, failing ? 0 : 1);
}

TEST(SetupAgreement, FailuresOnSeveralRanksAndRanksAlreadyDone) {
  ASSERT_GE(world_size(), 3);
  ScriptedSetup setup;
  const int rank = world_rank();
  // Two failures, both at the first poll (which comes before any check for notices, so neither can hear of the
  // other's failure first and abort instead).
  if (rank == 0 || rank == 2) setup.polls_to_fail = 0;
  if (rank == 1) setup.polls_to_done = 0;                   // done at once: nothing to abort, still false
  EXPECT_TRUE(everywhere(!setup.run()));
  EXPECT_EQ(setup.aborts, (rank == 0 || rank == 1 || rank == 2) ? 0 : 1);
}

TEST(SetupAgreement, BackToBackAgreementsDoNotSeeEachOthersNotices) {
  for (int round = 0; round < 3; ++round) {
    ScriptedSetup failing_round;
    if (world_rank() == 0) failing_round.polls_to_fail = 0;
    EXPECT_TRUE(everywhere(!failing_round.run())) << "round " << round;
    ScriptedSetup good_round;  // slow everywhere: a leftover notice would abort it
    good_round.polls_to_done = 10;
    EXPECT_TRUE(everywhere(good_round.run())) << "round " << round;
    EXPECT_EQ(good_round.aborts, 0) << "round " << round;
  }
}

}  // namespace
}  // namespace sluice::comm
