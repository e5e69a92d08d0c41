// The Trainer on a domain split (issue 32; docs/DOMAIN.md "What runs now"): a small U-Net on an 8 x 8 field of 2
// channels (conv 3x3 periodic -> GELU kept as a skip -> max pool -> conv 3x3 -> GELU -> stride-2 transposed conv ->
// concat skip -> conv 1x1, MSE) trained 3 AdamW steps on pipeline.domain [2, 2] (each rank takes its block of every
// sample and target). Against the undecomposed run, the same config with pipeline.domain [1, 1] on ONE rank
// (MPI_COMM_SELF, in the same process; one stage, one replica unless said): after every step the loss and every
// parameter this rank holds are the reference's bits.
//   4 ranks: 1 stage x 4 blocks; checkpoints across splits; accumulate 2 with a checkpoint inside a window.
// After training, each split run predicts: every rank gets its block of the undecomposed outputs.
//   8 ranks: 2 stages x 4 blocks under gpipe, 1f1b, interleaved (2 chunks), 1f1b with full recompute (halos
//            re-exchanged, and stashed: as many halo messages as without recompute) and 1f1b with a block's stages
//            on consecutive ranks (rank_order stages_blocks_replicas);
//            2 replicas x 1 stage x 4 blocks against 2 replicas undecomposed (on 2 ranks).
// And the one-block run is the plain layers' run (no pipeline.domain) within rounding: without the trainer's
// finish_domain_step the convolutions' gradients never reach the parameters, and that comparison fails.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/model/model_shape.h"
#include "core/runtime/rank_order_choice.h"
#include "core/runtime/run_report.h"
#include "core/runtime/trainer.h"
#include "core/runtime/trainer_checkpoint.h"
#include "tests/runtime/domain_trainer_runs.h"
#include "tests/mpi_world.h"

namespace sluice {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

constexpr int kSteps = 3;
constexpr int64_t kChannels = 2;
constexpr int64_t kSide = 8;  // small: the tests also run under ASan, oversubscribed
constexpr int64_t kPoints = kSide * kSide;

struct RunSpec {
  int stages = 1;
  int replicas = 1;
  std::string schedule = "1f1b";
  int chunks = 1;
  std::string recompute = "none";
  bool split = true;   // pipeline.domain [2, 2]; else [1, 1]
  bool plain = false;  // no pipeline.domain at all: the plain layers
  int accumulate = 1;  // optimizer.accumulate: calls of 4 / accumulate rows a replica per step
  int tile = 4;        // pipeline.domain_tile [tile, tile]
  bool declared = false;  // every rank declares its block of kDeclared (sluice_trainer_set_domain) before start
  std::string halos = "exchange";  // pipeline.recompute_halos
  std::string rank_order = "stages_within_node";  // a stage's blocks consecutive (block = world rank % 4)
  std::string padding3 = "periodic";  // the padding of layer 3, the second 3x3 conv (zeros: walls at the edges)
};

config::Config make_config(const RunSpec& r) {
  const std::string yaml =
      "model:\n  inputs: [2, 8, 8]\n  layers:\n"
      "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
      "    - {type: gelu, name: s}\n"
      "    - {type: pool, kernel: 2, mode: max}\n"
      "    - {type: conv, channels: 4, kernel: 3, padding: " + r.padding3 + "}\n"
      "    - {type: gelu}\n"
      "    - {type: conv_transpose, channels: 4, kernel: 2, stride: 2}\n"
      "    - {type: concat, from: s}\n"
      "    - {type: conv, channels: 2, kernel: 1}\n"
      "pipeline: {stages: " + std::to_string(r.stages) + ", data_parallel: " + std::to_string(r.replicas) +
      ", schedule: " + r.schedule + ", chunks: " + std::to_string(r.chunks) +
      ", microbatches: 2, recompute: " + r.recompute + ", recompute_halos: " + r.halos +
      ", rank_order: " + r.rank_order +
      (r.plain ? std::string() : std::string(", domain: ") + (r.split ? "[2, 2]" : "[1, 1]") + ", domain_tile: [" + std::to_string(r.tile) + ", " + std::to_string(r.tile) + "]") +
      "}\n"
      "loss: mse\noptimizer: {type: adamw, lr: 0.01, weight_decay: 0.01, accumulate: " + std::to_string(r.accumulate) +
      "}\n"
      "data: {type: external, batch: 4}\nseed: 3\n";
  return config::parse_config(yaml);
}

// Global sample s, channel c, point p of the inputs (kind 0) or targets (kind 1): smooth enough for a loss to fall.
float value(int kind, int64_t s, int64_t c, int64_t y, int64_t x) {
  return static_cast<float>(std::sin(0.37 * static_cast<double>(x + 1) * (c + 1) + 0.23 * static_cast<double>(y) +
                                     0.71 * static_cast<double>(s) + 1.3 * kind));
}

// Samples [first, first + rows) of one side, cut to the block of `box` (the whole field when box is empty).
std::vector<float> batch(int kind, int64_t first, int64_t rows, const config::DomainBox& box) {
  const auto of_kind = [kind](int64_t s, int64_t c, int64_t y, int64_t x) { return value(kind, s, c, y, x); };
  return runtime::domain_runs::field_samples(of_kind, kChannels, kSide, first, rows, box);
}

using runtime::domain_runs::differing_params;
using runtime::domain_runs::Params;
using runtime::domain_runs::params_of;
using runtime::domain_runs::temp_path;
struct History {
  std::vector<double> losses;
  std::vector<Params> params;  // after each step: every parameter this rank holds
  std::vector<float> prediction;  // this rank's block of the outputs of samples 100..103 after training
  config::DomainBox box;          // this rank's block (empty: the whole field)
  int64_t halo_messages = -1;     // halo messages this rank sent over the training calls (split runs)
};

// An uneven 2 x 2 split a host declares (rows cut at 2, columns at 6; whole tiles of 2 at every level): block b is
// world rank b.
const std::vector<config::DomainBox> kDeclared = {
    {{0, 0}, {2, 6}}, {{0, 6}, {2, 2}}, {{2, 0}, {6, 6}}, {{2, 6}, {6, 2}}};

// Where a run starts and what it leaves: calls [first_call, last_call) (-1: all of kSteps steps) after loading
// `load` (unless empty), then a checkpoint at `save` (unless empty).
struct Span {
  int first_call = 0;
  int last_call = -1;
  std::string load;
  std::string save;
};

// Steps of 4 samples a replica each in `accumulate` calls (each call's global batch replica-major, as the API and
// `sluice train` feed it), this rank's block of each sample; the loss and parameters after every call.
History train(MPI_Comm comm, const RunSpec& r, const Span& span = {}) {
  runtime::Trainer trainer(comm, make_config(r));
  if (r.declared) {
    trainer.start(runtime::DeclaredDomain{{kSide, kSide}, kDeclared.at(world_rank())});
  } else {
    trainer.start();
  }
  if (!span.load.empty()) runtime::load_checkpoint(trainer, span.load);
  const bool split = trainer.parts().domain != nullptr && trainer.layout().blocks > 1;
  const config::DomainBox box = split ? trainer.parts().domain->box() : config::DomainBox{};
  if (r.declared) {  // the step takes the declared block, not the even split's
    EXPECT_EQ(box.offset, kDeclared.at(world_rank()).offset);
    EXPECT_EQ(box.extent, kDeclared.at(world_rank()).extent);
  }
  const int64_t block_points = split ? box.extent[0] * box.extent[1] : kPoints;
  EXPECT_EQ(trainer.parts().input_features, kChannels * block_points);
  const int K = r.accumulate;
  const int64_t rows = 4 / K;
  History h;
  h.box = box;
  for (int call = span.first_call; call < (span.last_call < 0 ? kSteps * K : span.last_call); ++call) {
    const int64_t first =
        (call / K) * 4 * r.replicas + (call % K) * rows * r.replicas + trainer.layout().replica * rows;
    const std::vector<float> in = batch(0, first, rows, box), target = batch(1, first, rows, box);
    h.losses.push_back(trainer.train_step(in.data(), target.data(), rows).loss);
    h.params.push_back(params_of(trainer));
  }
  if (split) h.halo_messages = trainer.parts().domain->channel->totals().messages_sent;
  if (!span.save.empty()) runtime::save_checkpoint(trainer, span.save);
  const std::vector<float> in = batch(0, 100, rows, box);
  h.prediction.resize(static_cast<size_t>(rows * trainer.parts().output_features));
  trainer.predict(in.data(), h.prediction.data(), rows);
  return h;
}

// The reference's prediction cut to `box` ([rows][C][8][8] -> [rows][C][box]).
std::vector<float> cut(const std::vector<float>& whole, const config::DomainBox& box) {
  return runtime::domain_runs::cut_field(whole, kChannels, kSide, box);
}

// The whole run of `r` on MPI_COMM_SELF, made once per config (every rank makes its own).
const History& undecomposed(const RunSpec& r) {
  static std::map<std::string, History> made;
  const std::string key = make_config(r).text;
  auto it = made.find(key);
  if (it == made.end()) it = made.emplace(key, train(MPI_COMM_SELF, r)).first;
  return it->second;
}

// The split run on the world against `reference` (the undecomposed run on `reference_comm`; MPI_COMM_SELF: made
// once per config), bit for bit, then a prediction after training.
History expect_same_run(const RunSpec& split, const RunSpec& reference, MPI_Comm reference_comm,
                        const std::string& what) {
  const History got = train(MPI_COMM_WORLD, split);
  const History want = reference_comm == MPI_COMM_SELF ? undecomposed(reference) : train(reference_comm, reference);
  EXPECT_EQ(got.losses.size(), want.losses.size()) << what;
  if (got.losses.size() != want.losses.size()) return got;
  for (size_t s = 0; s < got.losses.size(); ++s) {
    const std::string at = what + ", call " + std::to_string(s + 1) + ", world rank " + std::to_string(world_rank());
    EXPECT_EQ(std::memcmp(&got.losses[s], &want.losses[s], sizeof(double)), 0)
        << at << ": loss " << got.losses[s] << " vs " << want.losses[s];
    EXPECT_FALSE(got.params[s].empty()) << at;
    EXPECT_EQ(differing_params(got.params[s], want.params[s]), 0) << at << ": parameters differ";
  }
  // Then a prediction: this rank's block of the undecomposed outputs.
  const std::vector<float> block = cut(want.prediction, got.box);
  EXPECT_EQ(got.prediction.size(), block.size()) << what;
  if (got.prediction.size() == block.size()) {
    EXPECT_EQ(std::memcmp(got.prediction.data(), block.data(), block.size() * sizeof(float)), 0)
        << what << ": prediction, world rank " << world_rank();
  }
  if (world_rank() == 0) std::printf("%s: losses %.9g %.9g %.9g\n", what.c_str(), got.losses[0], got.losses[1], got.losses[2]);
  EXPECT_LT(got.losses.back(), got.losses.front()) << what << ": the model does not learn";
  return got;
}

TEST(DomainTrainerTest, OneStageOnFourBlocksIsTheUndecomposedRun) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  RunSpec split;
  RunSpec whole = split;
  whole.split = false;
  expect_same_run(split, whole, MPI_COMM_SELF, "1 stage x 4 blocks");
}

// The anchor: the undecomposed run (one block, the tiled code) is the plain layers' run within rounding, so the
// bitwise comparisons above compare a run that trains (a domain whose gradients never reach the parameters would
// still equal itself on every split).
// The host's layout (sluice_trainer_set_domain, gathered at start): an uneven 2 x 2 split is the undecomposed run's
// bits too, and the blocks the step takes are the declared ones.
TEST(DomainTrainerTest, AnUnevenDeclaredSplitIsTheUndecomposedRun) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  RunSpec split;
  split.tile = 2;
  split.declared = true;
  RunSpec whole = split;
  whole.split = false;
  whole.declared = false;
  expect_same_run(split, whole, MPI_COMM_SELF, "declared uneven 2 x 2 blocks");
}

// The one-block run of `one` is the plain layers' run of it within rounding.
void expect_one_block_near_plain(const RunSpec& one) {
  RunSpec plain = one;
  plain.plain = true;
  const History& got = undecomposed(one);
  const History want = train(MPI_COMM_SELF, plain);
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_NEAR(got.losses[s], want.losses[s], 1e-6 * std::abs(want.losses[s])) << "step " << s + 1;
    ASSERT_EQ(got.params[s].size(), want.params[s].size());
    for (const auto& [name, values] : want.params[s]) {
      const std::vector<float>& mine = got.params[s].at(name);
      float scale = 0.0f, diff = 0.0f;
      for (size_t i = 0; i < values.size(); ++i) {
        scale = std::max(scale, std::abs(values[i]));
        diff = std::max(diff, std::abs(values[i] - mine[i]));
      }
      EXPECT_LE(diff, 1e-5f * scale) << name << " after step " << s + 1;
    }
  }
}

// Layer 3 padded with `padding` on 1 stage x 4 blocks: the undecomposed run bit for bit, and that run the plain
// layers' within rounding (the plain layers pad at the field's edges, so a split that wrapped there fails the second).
// Returns the split's spec.
RunSpec expect_padded_split_is_the_whole_run(const std::string& padding) {
  RunSpec split;
  split.padding3 = padding;
  RunSpec whole = split;
  whole.split = false;
  expect_same_run(split, whole, MPI_COMM_SELF, padding + " padding, 1 stage x 4 blocks");
  expect_one_block_near_plain(whole);
  return split;
}

TEST(DomainTrainerTest, OneBlockIsThePlainRunWithinRounding) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  RunSpec one;
  one.split = false;
  expect_one_block_near_plain(one);
}

// Reflect padding at layer 3 (tiles of 2 there, wider than its halo of 1): the undecomposed run bit for bit, and that
// run the plain layers' (which reflect at the field's edges) within rounding.
TEST(DomainTrainerTest, ReflectPaddedConvsAreTheUndecomposedRun) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  expect_padded_split_is_the_whole_run("reflect");
}

// Walls (issue 32): a model mixing a periodic conv (layer 0) and a zero-padded one (layer 3, forward and backward
// halos) on 4 blocks is the undecomposed run bit for bit, and that run is the plain layers' (which pad layer 3
// with zeros at the field's edges) within rounding: a split that wrapped there instead would fail the second. The
// start report's halo bytes on paper (no message across the zero edges) are what every rank sent.
TEST(DomainTrainerTest, ZeroPaddedConvsAreTheUndecomposedRun) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  const RunSpec split = expect_padded_split_is_the_whole_run("zeros");

  runtime::Trainer trainer(MPI_COMM_WORLD, make_config(split));
  trainer.start();
  const std::string report = runtime::layout_description(trainer);
  const config::DomainBox box = trainer.parts().domain->box();
  const std::vector<float> in = batch(0, 0, 4, box), target = batch(1, 0, 4, box);
  trainer.train_step(in.data(), target.data(), 4);
  const runtime::StepCounters& sent = trainer.stats().counters;
  // Layer 3 on 2 x 2 blocks of [4, 2, 2] sends one strip per dimension instead of two (the periodic run's 2176).
  EXPECT_LT(sent.halo_bytes_sent, 2176);
  const std::string paper = "halo bytes per call on paper " + std::to_string(sent.halo_bytes_sent) + " (" +
                            std::to_string(sent.halo_messages_sent) + " messages)";
  if (world_rank() == 0) EXPECT_NE(report.find(paper), std::string::npos) << report;
}

// The start report names the blocks and each rank's.
TEST(DomainTrainerTest, StartReportNamesTheBlocks) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  runtime::Trainer trainer(MPI_COMM_WORLD, make_config(RunSpec{}));
  trainer.start();
  const std::string report = runtime::layout_description(trainer);
  if (world_rank() == 0) {
    EXPECT_NE(report.find("4 ranks = 1 data-parallel x 1 pipeline ranks x 4 domain blocks"), std::string::npos)
        << report;
    EXPECT_NE(report.find("rank 3: replica 0, pipeline rank 0, domain block 3 (offset [4, 4], extent [4, 4])"),
              std::string::npos)
        << report;
  }
}

// The halo bytes one call of a block sends, measured by the channel (StepCounters), equal the start report's paper
// number (domain_step_traffic). By hand for a 4 x 4 block of this model (4 rows, 2 micro-batches, each dimension
// sending both strips, the second spanning the first's filled halos): conv 0 forward 2 channels x 4 bytes x
// (1 x 4 + 1 x 4 + 1 x 6 + 1 x 6) = 160 (no backward: the model input's gradient is not computed); conv 3 on the
// pooled 2 x 2 block, 4 channels, forward and backward 16 x (2 + 2 + 4 + 4) = 192 each; pool, transposed conv
// (kernel = stride) and the 1 x 1 conv read no halo: 544 bytes a sample, 2176 a call, in 3 fills x 4 messages x
// 2 micro-batches = 24 messages.
// The tile gathers likewise (domain_gather_bytes): each block holds one tile (tile 4 on a 4 x 4 block, 2 on the
// pooled 2 x 2) and sends each gather to the 3 other blocks, 8 bytes of tile index and the values: per call the
// parameter partials of conv 0 (72 + 4 floats: 8 + 304), conv 3 (144 + 4: 8 + 592), the transposed conv (64 + 4:
// 8 + 272) and the 1 x 1 conv (16 + 2: 8 + 72), and per micro-batch the loss's double (16): (312 + 600 + 280 + 80 +
// 2 · 16) · 3 = 3912 bytes.
TEST(DomainTrainerTest, StartReportHaloBytesAreTheMeasuredOnes) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  runtime::Trainer trainer(MPI_COMM_WORLD, make_config(RunSpec{}));
  trainer.start();
  const std::string report = runtime::layout_description(trainer);
  const config::DomainBox box = trainer.parts().domain->box();
  const std::vector<float> in = batch(0, 0, 4, box), target = batch(1, 0, 4, box);
  trainer.train_step(in.data(), target.data(), 4);
  const runtime::StepCounters& sent = trainer.stats().counters;
  EXPECT_EQ(sent.halo_bytes_sent, 2176);
  EXPECT_EQ(sent.halo_messages_sent, 24);
  EXPECT_EQ(sent.gather_bytes_sent, 3912);  // the gradients' tile partials, the loss
  // The rank-order estimate (step_traffic) counts the same gathers: 3912 / 3 to each of the 3 other blocks.
  const config::Config& cfg = trainer.config();
  const config::StepTraffic paper =
      runtime::step_traffic(cfg, model::model_shape(cfg.model, {}), {8}, {0}, 1);
  for (const config::StepTraffic::Gather& g : paper.gathers) {
    if (g.block == trainer.layout().block) EXPECT_EQ(3 * g.bytes, sent.gather_bytes_sent);
  }
  EXPECT_EQ(paper.gathers.size(), 4u);
  const runtime::PipelineStats all = runtime::gather_stats(trainer);
  ASSERT_EQ(all.halo_bytes_sent.size(), 4u);
  ASSERT_EQ(all.gather_bytes_sent.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(all.halo_bytes_sent[static_cast<size_t>(r)], 2176.0) << "rank " << r;
    EXPECT_EQ(all.gather_bytes_sent[static_cast<size_t>(r)], 3912.0) << "rank " << r;
  }
  if (world_rank() == 0) {
    for (int r = 0; r < 4; ++r) {
      EXPECT_NE(report.find("domain block " + std::to_string(r)), std::string::npos) << report;
    }
    EXPECT_NE(report.find("halo bytes per call on paper 2176 (24 messages), tile-gather bytes 3912"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("for 4 rows in 2 micro-batches (excluding the halos a recompute re-exchanges)"),
              std::string::npos)
        << report;
  }
}

// The norms' gathers on paper are the measured ones too (4 ranks, 2 x 2 blocks, tile 4: one tile a block, each
// gather to 3 others). Per call, by hand: conv 0 (2 -> 4, 3x3: 76 floats) 8 + 304; group norm (2 groups of 4
// channels, 8 parameters) 8 + 32 for its parameters and, per pass, Σ over the 2 micro-batches of 8 + 16 · S · G =
// 16 + 16 · 4 · 2 = 144, forward and backward; conv (4 -> 4: 148) 8 + 592; instance norm (G = 4 channels) 40 +
// 2 · (16 + 16 · 4 · 4); layernorm (parameters only) 40; the 1 x 1 conv (10) 48; the loss 2 · 16: 1944 · 3 = 5832.
TEST(DomainTrainerTest, StartReportGatherBytesCountTheNorms) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  const config::Config cfg = config::parse_config(
      "model:\n  inputs: [2, 8, 8]\n  layers:\n"
      "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
      "    - {type: group_norm, groups: 2}\n"
      "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
      "    - {type: instance_norm}\n"
      "    - {type: layernorm}\n"
      "    - {type: conv, channels: 2, kernel: 1}\n"
      "pipeline: {stages: 1, microbatches: 2, domain: [2, 2], domain_tile: [4, 4]}\n"
      "loss: mse\noptimizer: {type: adamw, lr: 0.01}\ndata: {type: external, batch: 4}\nseed: 3\n");
  runtime::Trainer trainer(MPI_COMM_WORLD, cfg);
  trainer.start();
  const std::string report = runtime::layout_description(trainer);
  const config::DomainBox box = trainer.parts().domain->box();
  const std::vector<float> in = batch(0, 0, 4, box), target = batch(1, 0, 4, box);
  trainer.train_step(in.data(), target.data(), 4);
  EXPECT_EQ(trainer.stats().counters.gather_bytes_sent, 5832);
  if (world_rank() == 0) EXPECT_NE(report.find("tile-gather bytes 5832, "), std::string::npos) << report;
}

// The calls after a checkpoint of the first `skipped`: the undecomposed run's bits.
void expect_resumed(const History& got, const History& whole, size_t skipped, const std::string& what) {
  ASSERT_EQ(got.losses.size() + skipped, whole.losses.size()) << what;
  for (size_t s = 0; s < got.losses.size(); ++s) {
    const std::string at = what + ", call " + std::to_string(s + skipped + 1);
    EXPECT_EQ(std::memcmp(&got.losses[s], &whole.losses[s + skipped], sizeof(double)), 0) << at;
    EXPECT_EQ(differing_params(got.params[s], whole.params[s + skipped]), 0) << at;
  }
}

// The checkpoint is the same whatever the split (block 0 of each stage writes; every block reads): saved on 2 x 2
// blocks it resumes undecomposed and split, and saved undecomposed it resumes split, bit for bit.
TEST(DomainTrainerTest, CheckpointsResumeAcrossSplits) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  RunSpec split;
  RunSpec whole = split;
  whole.split = false;
  const History& reference = undecomposed(whole);
  const std::string from_split = temp_path("domain_split.h5"), from_whole = temp_path("domain_whole.h5");
  train(MPI_COMM_WORLD, split, Span{0, 1, "", from_split});
  expect_resumed(train(MPI_COMM_WORLD, split, Span{1, -1, from_split, ""}), reference, 1, "split -> split");
  expect_resumed(train(MPI_COMM_SELF, whole, Span{1, -1, from_split, ""}), reference, 1, "split -> whole");
  if (world_rank() == 0) train(MPI_COMM_SELF, whole, Span{0, 1, "", from_whole});
  MPI_Barrier(MPI_COMM_WORLD);
  expect_resumed(train(MPI_COMM_WORLD, split, Span{1, -1, from_whole, ""}), reference, 1, "whole -> split");
}

// optimizer.accumulate 2: every call adds its blocks' tile partials into the gradients (finish_domain_step per
// call), so the window's partial sums are in the gradients after each call, as without a domain: the split run is
// the undecomposed one's bits, and a checkpoint in the middle of a window resumes undecomposed bit for bit.
TEST(DomainTrainerTest, AccumulationWindowsAndTheirCheckpoints) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  RunSpec split;
  split.accumulate = 2;
  RunSpec whole = split;
  whole.split = false;
  expect_same_run(split, whole, MPI_COMM_SELF, "1 stage x 4 blocks, accumulate 2");
  const History& reference = undecomposed(whole);
  const std::string mid_window = temp_path("domain_mid_window.h5");
  train(MPI_COMM_WORLD, split, Span{0, 1, "", mid_window});
  expect_resumed(train(MPI_COMM_SELF, whole, Span{1, -1, mid_window, ""}), reference, 1, "mid-window split -> whole");
  expect_resumed(train(MPI_COMM_WORLD, split, Span{1, -1, mid_window, ""}), reference, 1, "mid-window split -> split");
}

TEST(DomainTrainerTest, TwoStagesOnFourBlocksAreTheUndecomposedRun) {
  if (world_size() != 8) GTEST_SKIP() << "8 ranks";
  RunSpec whole;
  whole.split = false;
  RunSpec stashed{2, 1, "1f1b", 1, "full"};
  stashed.halos = "stash";  // the recomputed forwards reuse their padded inputs: no halo messages, the same bits
  // The last: a block's stages on consecutive ranks, a stage's blocks 2 ranks apart (the communicators follow the
  // layout's stage, replica and block, whatever the order).
  RunSpec stages_inside{2, 1, "1f1b"};
  stages_inside.rank_order = "stages_blocks_replicas";
  std::map<std::string, int64_t> halo_messages;  // by recompute and halos setting, under 1f1b
  for (const RunSpec& run : {RunSpec{2, 1, "gpipe"}, RunSpec{2, 1, "1f1b"}, RunSpec{2, 1, "interleaved", 2},
                             RunSpec{2, 1, "1f1b", 1, "full"}, stashed, stages_inside}) {
    const History got = expect_same_run(run, whole, MPI_COMM_SELF,
                                        "2 stages x 4 blocks, " + run.schedule + ", chunks " +
                                            std::to_string(run.chunks) + ", recompute " + run.recompute +
                                            ", halos " + run.halos + ", rank_order " + run.rank_order);
    if (run.schedule == "1f1b" && run.rank_order == "stages_within_node") {
      halo_messages[run.recompute + " " + run.halos] = got.halo_messages;
    }
  }
  // The trainer honours pipeline.recompute_halos: a recompute that re-exchanges sends more halo messages than the
  // run without recompute; one that stashes the padded inputs sends exactly as many.
  EXPECT_GT(halo_messages.at("full exchange"), halo_messages.at("none exchange"));
  EXPECT_EQ(halo_messages.at("full stash"), halo_messages.at("none exchange"));
}

TEST(DomainTrainerTest, TwoReplicasOnFourBlocksAreTwoUndecomposedReplicas) {
  if (world_size() != 8) GTEST_SKIP() << "8 ranks";
  // Each pair of world ranks runs its own undecomposed 2-replica copy; the split's replica r is world ranks
  // 4r .. 4r + 3 (a stage's blocks are consecutive), the copy's replica r its rank r.
  MPI_Comm pair = MPI_COMM_NULL;
  const int replica = world_rank() / 4;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 4, replica, &pair);
  RunSpec split{1, 2, "1f1b"};
  RunSpec whole = split;
  whole.split = false;
  expect_same_run(split, whole, pair, "2 replicas x 1 stage x 4 blocks");
  MPI_Comm_free(&pair);
}

}  // namespace
}  // namespace sluice
