// Submitted samples on a domain split (issue 32 item 4; docs/DOMAIN.md "Submitted samples"): each rank submits its
// block of every sample (sluice_submit_samples), the blocks travel only among the ranks of their block index, and
// sluice_train_submitted trains on them. The model is a small U-Net on an 8 x 8 field of 2 channels (conv 3x3
// periodic -> pool -> conv -> transposed conv -> concat -> conv 1x1, MSE) on pipeline.domain [2, 2]; the reference
// is the same config on pipeline.domain [1, 1] on ONE rank (MPI_COMM_SELF, in the same process) submitting the
// whole samples in the same global order. After every step the loss and every parameter this rank holds are the
// reference's bits, as a FIFO and as a replay buffer (whose draws must pick the same samples on every block).
// sluice_evaluate takes blocks too: every rank gets the whole samples' loss, the undecomposed run's bits.
//   4 ranks: 1 stage x 4 blocks; a domain group whose blocks submit different counts is refused on every rank;
//            checkpoints of held samples on a split save the whole samples and load each rank's block.
//   8 ranks: 2 stages x 4 blocks: two domain groups submit different samples, the stage-0 group's first (the order
//            of their lowest world ranks), and the first stage's ranks get the inputs, the last stage's the targets;
//            2 replicas x 4 blocks against two undecomposed replicas (on 2 ranks).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/runtime/evaluation.h"
#include "core/runtime/submitted_samples.h"
#include "core/runtime/trainer_checkpoint.h"
#include "core/runtime/trainer.h"
#include "tests/mpi_world.h"
#include "tests/runtime/domain_trainer_runs.h"
#include "tests/runtime/held_samples_fixture.h"

namespace sluice {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;
using runtime::held_samples::kChannels;
using runtime::held_samples::kSide;
using runtime::held_samples::samples;
namespace held_samples = runtime::held_samples;

constexpr int kSteps = 3;

struct RunSpec {
  int stages = 1;
  bool split = true;      // pipeline.domain [2, 2]; else [1, 1]
  int64_t replay = 0;     // data.replay.capacity (0: FIFO)
  bool drop = false;      // checkpoint.samples: drop
  int replicas = 1;       // pipeline.data_parallel
};

config::Config make_config(const RunSpec& r) {
  const std::string yaml =
      held_samples::model_yaml() +
      "pipeline: {stages: " + std::to_string(r.stages) + ", data_parallel: " + std::to_string(r.replicas) +
      ", microbatches: 2, rank_order: stages_within_node, domain: " +
      (r.split ? "[2, 2]" : "[1, 1]") + ", domain_tile: [4, 4]}\n"
      "loss: mse\noptimizer: {type: adamw, lr: 0.01}\n" +
      held_samples::data_yaml(r.replay) + "seed: 5\n" +
      (r.drop ? "checkpoint: {samples: drop}\n" : "");
  return config::parse_config(yaml);
}

using runtime::domain_runs::differing_params;
using runtime::domain_runs::Params;
using runtime::domain_runs::params_of;
struct History {
  std::vector<double> losses;
  std::vector<Params> params;
};

// Each step first submits 6 samples per submitting group, group g taking samples [base + 6g, base + 6g + 6) where
// base = 6 * groups * step (rank_order stages_within_node: a stage's blocks are world ranks 4g .. 4g + 3, so group g
// is world rank / 4), then trains on a global batch of 4 per replica. This rank submits `share` groups' samples
// from group `group` on: on a split its domain group's (its blocks of them), share 1; undecomposed on one rank the
// whole samples of every group at once (group 0, share = groups).
History train(MPI_Comm comm, const RunSpec& r, int groups, int group, int share) {
  runtime::Trainer trainer(comm, make_config(r));
  trainer.start();
  const config::DomainBox box = r.split ? trainer.parts().domain->box() : config::DomainBox{};
  const int64_t per_call = 6 * share;
  History h;
  for (int step = 0; step < kSteps; ++step) {
    const int64_t first = 6 * groups * step + 6 * group;
    const std::vector<float> in = samples(0, first, per_call, box), target = samples(1, first, per_call, box);
    runtime::submit_samples(trainer, in.data(), target.data(), per_call);
    h.losses.push_back(runtime::train_submitted(trainer, 4 * r.replicas).loss);
    h.params.push_back(params_of(trainer));
  }
  return h;
}

// The split run on the world against the undecomposed one: on ONE rank submitting every group's whole samples at
// once (one replica), or with replicas on `pair` (one rank per replica, each submitting its replica's samples; the
// split's replica r is world ranks 4r .. 4r + 3, whose lowest rank orders its group, as pair rank r orders its own).
void expect_same_run(const RunSpec& split, const std::string& what, MPI_Comm pair = MPI_COMM_NULL) {
  const int groups = split.stages * split.replicas;  // one replica's stages are consecutive world ranks / 4
  const History got = train(MPI_COMM_WORLD, split, groups, world_rank() / 4, 1);
  RunSpec whole = split;
  whole.split = false;
  whole.stages = 1;
  const History want = pair == MPI_COMM_NULL ? train(MPI_COMM_SELF, whole, groups, 0, groups)
                                             : train(pair, whole, groups, world_rank() / 4, 1);
  ASSERT_EQ(got.losses.size(), want.losses.size()) << what;
  for (size_t s = 0; s < got.losses.size(); ++s) {
    const std::string at = what + ", step " + std::to_string(s + 1) + ", world rank " + std::to_string(world_rank());
    EXPECT_EQ(std::memcmp(&got.losses[s], &want.losses[s], sizeof(double)), 0)
        << at << ": loss " << got.losses[s] << " vs " << want.losses[s];
    EXPECT_FALSE(got.params[s].empty()) << at;
    EXPECT_EQ(differing_params(got.params[s], want.params[s]), 0) << at << ": parameters differ";
  }
  EXPECT_LT(got.losses.back(), got.losses.front()) << what << ": the model does not learn";
}

TEST(DomainSubmittedTest, SubmittedBlocksTrainLikeTheWholeSamples) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  expect_same_run(RunSpec{1, true, 0}, "1 stage x 4 blocks, FIFO");
  expect_same_run(RunSpec{1, true, 8}, "1 stage x 4 blocks, replay 8");
}

TEST(DomainSubmittedTest, TwoStagesRouteEachBlockToItsOwnFirstAndLastStage) {
  if (world_size() != 8) GTEST_SKIP() << "8 ranks";
  expect_same_run(RunSpec{2, true, 0}, "2 stages x 4 blocks, FIFO");
  expect_same_run(RunSpec{2, true, 16}, "2 stages x 4 blocks, replay 16");
}

// Two replicas of 4 blocks: each block travels to replica 0's rank of its block index and back out to replica 1's
// (the data-parallel gather and broadcast), and the run is two undecomposed replicas' bit for bit.
TEST(DomainSubmittedTest, TwoReplicasShareEachBlockWithinItsBlockIndex) {
  if (world_size() != 8) GTEST_SKIP() << "8 ranks";
  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 4, world_rank() / 4, &pair);
  RunSpec split;
  split.replicas = 2;
  expect_same_run(split, "2 replicas x 4 blocks, FIFO", pair);
  split.replay = 16;
  expect_same_run(split, "2 replicas x 4 blocks, replay 16", pair);
  MPI_Comm_free(&pair);
}

// A domain group's blocks are blocks of the same samples: a rank that submits another count than its group's
// first rank is refused on every rank, naming both, and nothing of the call is kept.
TEST(DomainSubmittedTest, BlocksOfDifferentCountsAreRefused) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  runtime::Trainer trainer(MPI_COMM_WORLD, make_config(RunSpec{}));
  trainer.start();
  const config::DomainBox box = trainer.parts().domain->box();
  const int64_t count = world_rank() == 3 ? 3 : 4;
  const std::vector<float> in = samples(0, 0, 4, box), target = samples(1, 0, 4, box);
  try {
    runtime::submit_samples(trainer, in.data(), target.data(), count);
    ADD_FAILURE() << "different counts were accepted on world rank " << world_rank();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("world rank 0 (block 0) submitted 4 samples but world rank 3 (block 3)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(trainer.submitted_samples().held(), 0);
  runtime::submit_samples(trainer, in.data(), target.data(), 4);  // the trainer stays usable
  EXPECT_EQ(trainer.submitted_samples().held(), 4);
}

// sluice_evaluate on blocks: each rank passes its block of the same samples (after training, so the parameters are
// not the initial ones), and every rank gets the whole samples' mean loss, the undecomposed run's bits.
void expect_same_evaluation(const RunSpec& split, const std::string& what) {
  runtime::Trainer trainer(MPI_COMM_WORLD, make_config(split));
  trainer.start();
  RunSpec whole_spec = split;
  whole_spec.split = false;
  whole_spec.stages = 1;
  runtime::Trainer whole(MPI_COMM_SELF, make_config(whole_spec));
  whole.start();
  const config::DomainBox box = trainer.parts().domain->box();
  for (int64_t first : {0, 4}) {
    const std::vector<float> in = samples(0, first, 4, box), target = samples(1, first, 4, box);
    trainer.train_step(in.data(), target.data(), 4);
    const std::vector<float> whole_in = samples(0, first, 4, {}), whole_target = samples(1, first, 4, {});
    whole.train_step(whole_in.data(), whole_target.data(), 4);
  }
  const std::vector<float> in = samples(0, 50, 6, box), target = samples(1, 50, 6, box);
  const std::vector<float> whole_in = samples(0, 50, 6, {}), whole_target = samples(1, 50, 6, {});
  const double got = runtime::evaluate(trainer, in.data(), target.data(), 6);
  const double want = runtime::evaluate(whole, whole_in.data(), whole_target.data(), 6);
  EXPECT_EQ(std::memcmp(&got, &want, sizeof(double)), 0)
      << what << ", world rank " << world_rank() << ": loss " << got << " vs " << want;
  EXPECT_GT(got, 0.0) << what;
}

TEST(DomainSubmittedTest, EvaluateOnBlocksIsTheWholeSamplesLoss) {
  if (world_size() == 4) expect_same_evaluation(RunSpec{1, true, 0}, "1 stage x 4 blocks");
  if (world_size() == 8) expect_same_evaluation(RunSpec{2, true, 0}, "2 stages x 4 blocks");
}

// Held samples in checkpoints on a split: saved as the whole samples (domain_sample_save_test checks the file) and
// loaded block by block (domain_sample_load_test compares the runs); here the calls are accepted and the counts
// come back, whichever side wrote the file. checkpoint.samples: drop saves none.
TEST(DomainSubmittedTest, CheckpointsOfHeldBlocksSaveAndLoad) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/held_whole.h5";
  if (world_rank() == 0) {  // the undecomposed run holding 6 whole samples
    runtime::Trainer whole(MPI_COMM_SELF, make_config(RunSpec{1, false, 0}));
    whole.start();
    const std::vector<float> in = samples(0, 0, 6, {}), target = samples(1, 0, 6, {});
    runtime::submit_samples(whole, in.data(), target.data(), 6);
    runtime::save_checkpoint(whole, path);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  runtime::Trainer loaded(MPI_COMM_WORLD, make_config(RunSpec{}));
  loaded.start();
  runtime::load_checkpoint(loaded, path);  // each rank reads its block of the 6 whole samples
  EXPECT_EQ(loaded.submitted_samples().held(), 6);
  runtime::Trainer trainer(MPI_COMM_WORLD, make_config(RunSpec{}));
  trainer.start();
  const config::DomainBox box = trainer.parts().domain->box();
  const std::vector<float> in = samples(0, 0, 6, box), target = samples(1, 0, 6, box);
  runtime::submit_samples(trainer, in.data(), target.data(), 6);
  runtime::save_checkpoint(trainer, path + ".split");  // held blocks save as the whole samples
  EXPECT_GT(runtime::train_submitted(trainer, 4).loss, 0.0);
  runtime::Trainer reloaded(MPI_COMM_WORLD, make_config(RunSpec{}));
  reloaded.start();
  runtime::load_checkpoint(reloaded, path + ".split");  // a split's file back onto a split
  EXPECT_EQ(reloaded.submitted_samples().held(), 6);
  // checkpoint.samples: drop saves none: a split holding blocks saves and resumes with an empty store.
  RunSpec drop;
  drop.drop = true;
  runtime::Trainer dropping(MPI_COMM_WORLD, make_config(drop));
  dropping.start();
  runtime::submit_samples(dropping, in.data(), target.data(), 6);
  runtime::save_checkpoint(dropping, path + ".drop");
  runtime::Trainer resumed(MPI_COMM_WORLD, make_config(drop));
  resumed.start();
  runtime::load_checkpoint(resumed, path + ".drop");
  EXPECT_EQ(resumed.submitted_samples().held(), 0);
}

}  // namespace
}  // namespace sluice
