// A rank allocates only its share of the model (issue: a model that does not fit on one rank must still start).
// Four pipeline ranks train a model of 8 equal linear layers (2048 x 2048, AdamW): its whole state (parameters,
// gradients, two moments) is 537 MB, 134 MB per rank. Judged by measured peak RSS (VmHWM; an address-space limit
// would trip on MPI's and BLAS's virtual reservations): what a rank's peak grows by from before the trainer is
// created through start and one optimizer step must stay within 1.3 x its share plus a fixed runtime overhead of
// kOverheadBytes = 24 MB (stash, messages, BLAS buffers, allocator slack; ~3 MB measured), so the
// whole model is 2.7x what one rank may use. Building every layer and keeping one's own, as
// the trainer once did, needs 268 MB of parameters and gradients on every rank before the optimizer state: over
// the limit.
#include <gtest/gtest.h>
#include <mpi.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/config/config_parser.h"
#include "core/runtime/trainer.h"
#include "tests/mpi_world.h"

namespace sluice {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

constexpr int64_t kWidth = 2048;
constexpr int kLayers = 8;
constexpr int64_t kOverheadBytes = 24ll << 20;

// Peak resident set of this process so far, in bytes.
int64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 20, '\n');
  }
  ADD_FAILURE() << "no VmHWM in /proc/self/status";
  return 0;
}

std::string model_yaml() {
  std::string yaml = "model:\n  inputs: " + std::to_string(kWidth) + "\n  layers:\n";
  for (int i = 0; i < kLayers; ++i) yaml += "    - {type: linear, outputs: " + std::to_string(kWidth) + "}\n";
  return yaml +
         "pipeline: {stages: 4, schedule: 1f1b, microbatches: 2}\n"
         "optimizer: {type: adamw, lr: 1.0e-3}\n"
         "data: {type: external, batch: 4}\n"
         "seed: 3\n";
}

TEST(RankMemoryShare, PeakRssGrowsByOnlyThisRanksShare) {
  ASSERT_EQ(world_size(), 4);
  const int64_t before = peak_rss_bytes();
  runtime::Trainer trainer(MPI_COMM_WORLD, config::parse_config(model_yaml()));
  trainer.start();
  const std::vector<float> inputs(4 * kWidth, 0.5f), targets(4 * kWidth, 0.25f);
  trainer.train_step(inputs.data(), targets.data(), 4);

  int64_t parameter_floats = 0;
  for (const auto& [index, stage] : trainer.parts().stages) {
    for (const model::Parameter* p : stage->parameters()) parameter_floats += p->value.rows() * p->value.cols();
  }
  // Two of the eight layers, and nothing of the others'.
  EXPECT_EQ(parameter_floats, 2 * (kWidth * kWidth + kWidth)) << "rank " << world_rank();
  const int64_t share = 4 * parameter_floats * static_cast<int64_t>(sizeof(float));  // value, grad, 2 moments
  const int64_t grown = peak_rss_bytes() - before;
  const int64_t limit = share + share * 3 / 10 + kOverheadBytes;
  std::printf("rank %d: share %.1f MB, peak RSS grew %.1f MB, limit %.1f MB (whole model %.1f MB)\n", world_rank(),
              share / 1e6, grown / 1e6, limit / 1e6, 4.0 * share / 1e6);
  EXPECT_LE(grown, limit) << "rank " << world_rank() << " holds more than its share";
  EXPECT_GE(grown, share / 2) << "rank " << world_rank() << ": the measurement missed the rank's own state";
}

}  // namespace
}  // namespace sluice
