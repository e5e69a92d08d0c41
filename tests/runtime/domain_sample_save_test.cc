// Held submitted samples in a checkpoint saved on a pipeline.domain split (issue 32 item 4; docs/DOMAIN.md "Held
// samples in checkpoints on a split"): every block of replica 0 contributes its box of /samples/inputs and
// /samples/targets, rank 0 writes each dataset slab by slab from the owners' sub-boxes, and the file holds the whole
// samples exactly as the undecomposed run saves them: the /samples datasets' bytes and crc32 attributes are the
// undecomposed run's (read with HDF5), and the undecomposed trainer resumed from the split's file trains bit for bit
// as when resumed from its own. The split's snapshot is also saved with a tiny SaveOptions::chunk_bytes (24 floats:
// three rows of a sample's channel), so slabs cross block boundaries and every dataset takes many slabs.
// The model is domain_submitted_test's small U-Net (8 x 8 field of 2 channels); the reference runs on ONE rank
// (MPI_COMM_SELF) submitting every group's whole samples in the same global order.
//   4 ranks: 1 stage x 2 x 2 blocks (FIFO and replay), an uneven declared 2 x 2 split, 2 stages x 1 x 2 blocks.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/save.h"
#include "core/common/hdf5_lock.h"
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

struct RunSpec {
  int stages = 1;
  std::string domain = "[2, 2]";  // pipeline.domain of the split
  int blocks = 4;                 // its blocks (a stage's ranks)
  int tile = 4;                   // pipeline.domain_tile [tile, tile]
  bool declared = false;          // the blocks are kDeclared (sluice_trainer_set_domain)
  int64_t replay = 0;             // data.replay.capacity (0: FIFO)
};

config::Config make_config(const RunSpec& r, bool split) {
  const std::string yaml =
      held_samples::model_yaml() +
      "pipeline: {stages: " + std::to_string(split ? r.stages : 1) +
      ", microbatches: 2, rank_order: stages_within_node, domain: " + (split ? r.domain : std::string("[1, 1]")) +
      ", domain_tile: [" + std::to_string(r.tile) + ", " + std::to_string(r.tile) + "]}\n"
      "loss: mse\noptimizer: {type: adamw, lr: 0.01}\n" +
      held_samples::data_yaml(r.replay) + "seed: 5\n";
  return config::parse_config(yaml);
}

std::unique_ptr<runtime::Trainer> started(MPI_Comm comm, const RunSpec& r, bool split) {
  auto trainer = std::make_unique<runtime::Trainer>(comm, make_config(r, split));
  if (split && r.declared) {
    trainer->start(runtime::DeclaredDomain{{kSide, kSide}, held_samples::declared_blocks().at(static_cast<size_t>(world_rank()))});
  } else {
    trainer->start();
  }
  return trainer;
}

// Two rounds of submitting (6 samples per group, group g of `groups` taking [base + 6g, base + 6g + 6)) and one
// training call, then a third round submitted and held. This rank submits `share` groups' samples from group
// `group` on, cut to `box` (empty: the whole samples).
void fill(runtime::Trainer& trainer, int groups, int group, int share, const config::DomainBox& box) {
  for (int round = 0; round < 3; ++round) {
    const int64_t first = 6 * groups * round + 6 * group;
    const std::vector<float> in = samples(0, first, 6 * share, box), target = samples(1, first, 6 * share, box);
    runtime::submit_samples(trainer, in.data(), target.data(), 6 * share);
    if (round < 2) runtime::train_submitted(trainer, 4);
  }
}

// A dataset as stored: dims, raw bytes and its crc32 attribute.
struct Stored {
  std::vector<hsize_t> dims;
  std::vector<unsigned char> bytes;
  uint32_t crc32 = 0;
};

Stored read_stored(const std::string& file, const std::string& path) {
  const Hdf5Lock lock;
  Stored stored;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = f < 0 ? -1 : H5Dopen2(f, path.c_str(), H5P_DEFAULT);
  if (d >= 0) {
    const hid_t space = H5Dget_space(d), type = H5Dget_type(d);
    stored.dims.resize(static_cast<size_t>(H5Sget_simple_extent_ndims(space)));
    H5Sget_simple_extent_dims(space, stored.dims.data(), nullptr);
    size_t count = H5Tget_size(type);
    for (hsize_t dim : stored.dims) count *= dim;
    stored.bytes.resize(count);
    H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, stored.bytes.data());
    const hid_t attribute = H5Aopen(d, "crc32", H5P_DEFAULT);
    H5Aread(attribute, H5T_NATIVE_UINT32, &stored.crc32);
    H5Aclose(attribute);
    H5Tclose(type);
    H5Sclose(space);
    H5Dclose(d);
  }
  if (f >= 0) H5Fclose(f);
  return stored;
}

void expect_same_samples(const std::string& got, const std::string& want, const std::string& what) {
  for (const char* path : {"/samples/inputs", "/samples/targets"}) {
    const Stored a = read_stored(got, path), b = read_stored(want, path);
    EXPECT_FALSE(b.bytes.empty()) << what << ": " << path << " missing in the undecomposed file";
    EXPECT_EQ(a.dims, b.dims) << what << ": " << path;
    EXPECT_TRUE(a.bytes == b.bytes) << what << ": " << path << " bytes differ";
    EXPECT_EQ(a.crc32, b.crc32) << what << ": " << path << " crc32";
  }
}

struct Resumed {
  std::vector<double> losses;
  Params params;
};

// The undecomposed trainer on this rank alone, resumed from `file`, trains two calls on the held samples.
Resumed resume(const RunSpec& r, const std::string& file) {
  const auto trainer = started(MPI_COMM_SELF, r, false);
  runtime::load_checkpoint(*trainer, file);
  Resumed out;
  for (int call = 0; call < 2; ++call) out.losses.push_back(runtime::train_submitted(*trainer, 4).loss);
  out.params = params_of(*trainer);
  return out;
}

void expect_saved_like_the_whole_run(const RunSpec& r, const std::string& what) {
  const int groups = r.stages;  // a stage's blocks are consecutive world ranks: one submitting group per stage
  const std::string name = "held_" + std::to_string(r.stages) + "_" + std::to_string(r.declared) + "_" +
                           std::to_string(r.replay);
  const std::string split_file = temp_path(name + "_split.h5"), tiny_file = temp_path(name + "_tiny.h5"),
                    whole_file = temp_path(name + "_whole.h5");
  {
    const auto trainer = started(MPI_COMM_WORLD, r, true);
    fill(*trainer, groups, world_rank() / r.blocks, 1, trainer->parts().domain->box());
    checkpoint::Snapshot snapshot;
    runtime::save_checkpoint(*trainer, split_file, nullptr, [&](checkpoint::Snapshot& s) { snapshot = s; });
    checkpoint::SaveOptions tiny;
    tiny.chunk_bytes = 24 * sizeof(float);
    checkpoint::save(MPI_COMM_WORLD, tiny_file, snapshot, tiny);
  }
  if (world_rank() == 0) {
    {
      const auto whole = started(MPI_COMM_SELF, r, false);
      fill(*whole, groups, 0, groups, {});
      runtime::save_checkpoint(*whole, whole_file);
    }
    expect_same_samples(split_file, whole_file, what);
    expect_same_samples(tiny_file, whole_file, what + ", tiny chunks");
    const Resumed want = resume(r, whole_file);
    for (const std::string& file : {split_file, tiny_file}) {
      const Resumed got = resume(r, file);
      ASSERT_EQ(got.losses.size(), want.losses.size()) << what;
      for (size_t c = 0; c < got.losses.size(); ++c) {
        EXPECT_EQ(std::memcmp(&got.losses[c], &want.losses[c], sizeof(double)), 0)
            << what << " from " << file << ", call " << c << ": loss " << got.losses[c] << " vs " << want.losses[c];
      }
      EXPECT_EQ(differing_params(got.params, want.params), 0) << what << " from " << file << ": parameters differ";
      EXPECT_FALSE(got.params.empty()) << what;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(DomainSampleSaveTest, HeldBlocksSaveAsTheWholeSamples) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  expect_saved_like_the_whole_run(RunSpec{}, "1 stage x 2 x 2 blocks, FIFO");
  RunSpec replay;
  replay.replay = 16;
  expect_saved_like_the_whole_run(replay, "1 stage x 2 x 2 blocks, replay 16");
}

TEST(DomainSampleSaveTest, HeldBlocksOfAnUnevenDeclaredSplitSaveAsTheWholeSamples) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  RunSpec declared;
  declared.tile = 2;
  declared.declared = true;
  expect_saved_like_the_whole_run(declared, "declared uneven 2 x 2 blocks, FIFO");
}

// The first stage's blocks own the inputs, the last stage's the targets.
TEST(DomainSampleSaveTest, TwoStagesSaveInputsFromTheFirstAndTargetsFromTheLast) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  RunSpec stages;
  stages.stages = 2;
  stages.domain = "[1, 2]";
  stages.blocks = 2;
  expect_saved_like_the_whole_run(stages, "2 stages x 1 x 2 blocks, FIFO");
}

}  // namespace
}  // namespace sluice
