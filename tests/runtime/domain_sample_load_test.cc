// Held submitted samples loaded onto a pipeline.domain split (issue 32 item 4; docs/DOMAIN.md "Held samples in
// checkpoints on a split"): the undecomposed trainer (pipeline.domain [1, 1], ONE rank, MPI_COMM_SELF) holds
// whole submitted samples and saves them ([held, C, D..], as today); a split trainer on the 4 ranks loads that file,
// each rank reading only its block (one hyperslab per side), and trains on. The reference is the undecomposed
// trainer resumed from the same file (on every rank, MPI_COMM_SELF, in the same process): after every step the loss
// and every parameter this rank holds are the reference's bits, as a FIFO and as a replay buffer (whose draws must
// pick the same held samples on every block), for the even 2 x 2 split and an uneven one the ranks declare.
// The model is domain_submitted_test's small U-Net on an 8 x 8 field of 2 channels, tile 2 (whole at every level of
// the uneven split). And the refusals: a file with one sample byte flipped inside block 3 only (outside the blocks
// of ranks 0..2, which never read it) is refused on every rank naming the file and the dataset; a file whose
// /samples/targets has another shape is refused naming that dataset. Nothing is restored after either.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/runtime/submitted_samples.h"
#include "core/runtime/trainer.h"
#include "core/runtime/trainer_checkpoint.h"
#include "tests/mpi_world.h"
#include "tests/runtime/domain_trainer_runs.h"
#include "tests/runtime/held_samples_fixture.h"

namespace sluice {
namespace {

using runtime::domain_runs::differing_params;
using runtime::domain_runs::Params;
using runtime::domain_runs::params_of;
using runtime::domain_runs::temp_path;
using sluice::testing::world_rank;
using sluice::testing::world_size;
using runtime::held_samples::kChannels;
using runtime::held_samples::kSide;
using runtime::held_samples::samples;
namespace held_samples = runtime::held_samples;

constexpr int kSteps = 2;  // FIFO: step 1 trains 4 loaded samples, step 2 the last 2 loaded and 2 new
constexpr int64_t kSaved = 10;  // submitted before the save; one step of 4 is trained before it too

enum class Split { kWhole, kEven, kDeclared };

config::Config make_config(Split split, int64_t replay) {
  const std::string yaml =
      held_samples::model_yaml() +
      "pipeline: {stages: 1, microbatches: 2, domain: " +
      std::string(split == Split::kWhole ? "[1, 1]" : "[2, 2]") + ", domain_tile: [2, 2]}\n"
      "loss: mse\noptimizer: {type: adamw, lr: 0.01}\n" +
      held_samples::data_yaml(replay) + "seed: 5\n";
  return config::parse_config(yaml);
}

void start(runtime::Trainer& trainer, Split split) {
  if (split == Split::kDeclared) {
    trainer.start(runtime::DeclaredDomain{{kSide, kSide}, held_samples::declared_blocks().at(world_rank())});
  } else {
    trainer.start();
  }
}

config::DomainBox box_of(const runtime::Trainer& trainer) {
  return trainer.layout().blocks > 1 ? trainer.parts().domain->box() : config::DomainBox{};
}

// World rank 0 alone: the undecomposed trainer submits kSaved whole samples, trains one step of 4 on them and saves
// (`edit`, if given, changes the saved entries). Every rank returns when the file is complete.
void save_whole(const std::string& path, int64_t replay,
                const std::function<void(checkpoint::Snapshot&)>& edit = {}) {
  if (world_rank() == 0) {
    runtime::Trainer whole(MPI_COMM_SELF, make_config(Split::kWhole, replay));
    whole.start();
    const std::vector<float> in = samples(0, 0, kSaved, {}), target = samples(1, 0, kSaved, {});
    runtime::submit_samples(whole, in.data(), target.data(), kSaved);
    runtime::train_submitted(whole, 4);
    runtime::save_checkpoint(whole, path, nullptr, edit);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

struct History {
  int64_t held_after_load = -1;
  std::vector<double> losses;
  std::vector<Params> params;
};

// Loads `path` on `comm` and trains kSteps steps, each first submitting 2 new samples (this rank's block of them):
// the loaded samples come first in the store, the new ones after.
History resume(MPI_Comm comm, Split split, int64_t replay, const std::string& path) {
  runtime::Trainer trainer(comm, make_config(split, replay));
  start(trainer, split);
  runtime::load_checkpoint(trainer, path);
  const config::DomainBox box = box_of(trainer);
  History h;
  h.held_after_load = trainer.submitted_samples().held();
  for (int step = 0; step < kSteps; ++step) {
    const int64_t first = 100 + 2 * step;
    const std::vector<float> in = samples(0, first, 2, box), target = samples(1, first, 2, box);
    runtime::submit_samples(trainer, in.data(), target.data(), 2);
    h.losses.push_back(runtime::train_submitted(trainer, 4).loss);
    h.params.push_back(params_of(trainer));
  }
  return h;
}

// One saved file and one undecomposed resumed reference per store policy, against both splits (the same tile, so
// the reference is both's).
void expect_same_runs(int64_t replay, const std::string& policy) {
  const std::string path = temp_path("held_whole_" + std::to_string(replay) + ".h5");
  save_whole(path, replay);
  const History want = resume(MPI_COMM_SELF, Split::kWhole, replay, path);
  EXPECT_EQ(want.held_after_load, replay > 0 ? std::min(kSaved, replay) : kSaved - 4) << policy;  // a full ring drops
  const std::pair<Split, const char*> splits[] = {{Split::kEven, "2 x 2 split"},
                                                   {Split::kDeclared, "declared uneven split"}};
  for (const auto& [split, name] : splits) {
    const std::string what = std::string(name) + ", " + policy;
    const History got = resume(MPI_COMM_WORLD, split, replay, path);
    EXPECT_EQ(got.held_after_load, want.held_after_load) << what;
    ASSERT_EQ(got.losses.size(), want.losses.size()) << what;
    for (size_t s = 0; s < got.losses.size(); ++s) {
      const std::string at = what + ", step " + std::to_string(s + 1) + ", world rank " + std::to_string(world_rank());
      EXPECT_EQ(std::memcmp(&got.losses[s], &want.losses[s], sizeof(double)), 0)
          << at << ": loss " << got.losses[s] << " vs " << want.losses[s];
      EXPECT_FALSE(got.params[s].empty()) << at;
      EXPECT_EQ(differing_params(got.params[s], want.params[s]), 0) << at << ": parameters differ";
    }
  }
}

TEST(DomainSampleLoadTest, SplitsResumeHeldWholeSamplesLikeTheUndecomposedRun) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  expect_same_runs(0, "FIFO");
  expect_same_runs(8, "replay 8");
}

// Every rank: loading `path` on the even split fails with kCheckpoint whose message holds each of `needles`, and
// the trainer holds nothing afterwards.
void expect_refused(const std::string& path, const std::vector<std::string>& needles, const std::string& what) {
  runtime::Trainer trainer(MPI_COMM_WORLD, make_config(Split::kEven, 0));
  trainer.start();
  try {
    runtime::load_checkpoint(trainer, path);
    ADD_FAILURE() << what << ": loaded on world rank " << world_rank();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCheckpoint) << what << ": " << e.what();
    for (const std::string& needle : needles) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << what << ", world rank " << world_rank() << ": '" << needle << "' not in: " << e.what();
    }
  }
  EXPECT_EQ(trainer.submitted_samples().held(), 0) << what;
}

// The byte offset in `file` of float element `element` of the contiguous dataset `dataset`.
int64_t element_byte(const std::string& file, const std::string& dataset, int64_t element) {
  const hid_t h = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(h, dataset.c_str(), H5P_DEFAULT);
  const haddr_t offset = H5Dget_offset(d);
  H5Dclose(d);
  H5Fclose(h);
  EXPECT_NE(offset, HADDR_UNDEF) << dataset << " is not stored contiguously";
  return static_cast<int64_t>(offset) + element * static_cast<int64_t>(sizeof(float));
}

TEST(DomainSampleLoadTest, AFlippedByteOutsideARanksBlockIsRefusedOnEveryRank) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  const std::string good = temp_path("held_flip_good.h5"), bad = temp_path("held_flip_bad.h5");
  save_whole(good, 0);
  if (world_rank() == 0) {
    // Held sample 1 (of [6, 2, 8, 8]), channel 1, point (6, 7): in block 3 (rows 4..7, columns 4..7) alone.
    const int64_t element = ((1 * kChannels + 1) * kSide + 6) * kSide + 7;
    std::ifstream in(good, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes.at(static_cast<size_t>(element_byte(good, "/samples/inputs", element))) ^= 0x01;  // the lowest mantissa bit
    std::ofstream(bad, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_refused(bad, {bad, "dataset /samples/inputs", "checksum mismatch"}, "one flipped byte in block 3");
}

TEST(DomainSampleLoadTest, AHeldSampleDatasetOfAnotherShapeIsRefusedNamingIt) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  const std::string path = temp_path("held_shape.h5");
  // The same values saved as [6, 2, 4, 16]: a consistent file (manifest and checksum agree), the wrong field.
  save_whole(path, 0, [](checkpoint::Snapshot& snapshot) {
    for (checkpoint::Entry& entry : snapshot.entries) {
      if (entry.path == "/samples/targets") entry.dims = {entry.dims[0], kChannels, kSide / 2, kSide * 2};
    }
  });
  expect_refused(path, {"dataset /samples/targets", "shape mismatch", "[6, 2, 4, 16]", "expected [6, 2, 8, 8]"},
                 "targets stored [6, 2, 4, 16]");
}

}  // namespace
}  // namespace sluice
