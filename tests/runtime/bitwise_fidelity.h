// The fidelity tests' one check: a pipelined Trainer and the sequential reference train the same steps on the same
// synthetic batches; the losses and every parameter must be equal bit for bit (shared by pipeline_fidelity_test and
// field_fidelity_test).
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/config/sample_shape.h"
#include "core/data/synthetic_data.h"
#include "core/runtime/sequential_reference.h"
#include "core/runtime/trainer.h"

namespace sluice {

constexpr int kSteps = 3;
constexpr int64_t kReplicaBatch = 32;

struct Batch {
  std::vector<float> inputs, targets;
};

inline Batch global_batch(data::SyntheticData& source, int step, int64_t rows) {
  Batch b;
  b.inputs.resize(rows * source.input_features());
  b.targets.resize(rows * source.target_features());
  source.batch(step, 0, rows, b.inputs.data(), b.targets.data());
  return b;
}

// Runs kSteps on the pipeline and on the sequential reference; returns the number of parameter elements
// compared on this rank after checking them (and the losses) for bit equality.
// `targets`: kOneHot for loss: cross_entropy (one-hot over the channels at each point of a field output).
inline void expect_bitwise_equal_to_sequential(const config::Config& cfg, int dp, int64_t replica_batch = kReplicaBatch,
                                               data::TargetKind targets = data::TargetKind::kRegression) {
  runtime::Trainer trainer(MPI_COMM_WORLD, cfg);
  trainer.start();
  runtime::SequentialReference reference(cfg, dp);
  data::SyntheticData source(cfg.seed, trainer.input_features(), trainer.output_features(), targets,
                             config::field_points(trainer.output_shape()));
  const int64_t rows = replica_batch * dp;
  const int replica = trainer.layout().replica;
  for (int step = 0; step < kSteps; ++step) {
    Batch b = global_batch(source, step, rows);
    const runtime::StepResult pipelined =
        trainer.train_step(b.inputs.data() + replica * replica_batch * trainer.input_features(),
                           b.targets.data() + replica * replica_batch * trainer.output_features(), replica_batch);
    const double sequential = reference.train_step(b.inputs.data(), b.targets.data(), rows);
    ASSERT_EQ(pipelined.loss, sequential) << "loss differs at step " << step + 1;
  }
  std::map<std::string, const model::Parameter*> expected;
  for (model::Parameter* p : reference.parameters()) expected[p->qualified_name()] = p;
  int64_t compared = 0;
  for (const auto& [index, stage] : trainer.stages()) {
    for (model::Parameter* p : stage->parameters()) {
      auto it = expected.find(p->qualified_name());
      ASSERT_NE(it, expected.end()) << p->qualified_name();
      ASSERT_EQ(p->value.size(), it->second->value.size());
      ASSERT_EQ(0, std::memcmp(p->value.data(), it->second->value.data(), p->value.bytes()))
          << p->qualified_name() << " differs from the sequential run (stage " << index << ")";
      compared += p->value.size();
    }
  }
  // Every rank owns at least one stage; most own parameters. Make sure the check looked at something.
  int64_t total = 0;
  MPI_Allreduce(&compared, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(total, 0);
}

}  // namespace sluice
