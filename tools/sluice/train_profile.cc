#include "tools/sluice/train_profile.h"

#include <array>
#include <vector>

#include "core/comm/agreement.h"
#include "core/comm/small_collectives.h"
#include "core/runtime/measured_costs.h"
#include "core/runtime/message_latency.h"
#include "core/schedule/cost_profile.h"

namespace sluice::tools {
namespace {

// Steps the second size runs; the last one is measured (the first pays the allocations, as a run's first does).
constexpr int kSecondSizeSteps = 2;

// World ranks of replica 0's stages 0 and 1 (whatever pipeline.rank_order made of them).
std::array<int, 2> first_two_stages(MPI_Comm world, const config::Layout& layout) {
  const std::vector<int> all = comm::all_gather_ints(world, {layout.stage_rank, layout.replica}, "stages of the ranks");
  std::array<int, 2> ranks{0, 0};
  for (int r = 0; r < layout.world; ++r)
    if (all[2 * r + 1] == 0 && all[2 * r] < 2) ranks[all[2 * r]] = r;
  return ranks;
}

double rows_per_microbatch(const runtime::Trainer& trainer) {
  const config::Config& cfg = trainer.config();
  return static_cast<double>(cfg.data.batch) / trainer.layout().data_parallel / cfg.pipeline.microbatches;
}

// Collective: the per-action costs of `trainer`'s last step (busy seconds of every rank, summed over one pipeline:
// every replica runs the same schedule, so the world's sum over the replicas' count) and the one-way time of an
// activation of its rows between the first two stages.
runtime::MeasuredPoint measure(MPI_Comm world, const runtime::Trainer& trainer) {
  const config::Layout& layout = trainer.layout();
  runtime::KindSeconds busy = trainer.stats().counters.busy_seconds;
  comm::all_sum(world, busy.data(), static_cast<int>(busy.size()), "busy seconds of the ranks");
  for (double& seconds : busy) seconds /= layout.data_parallel;
  const double rows = rows_per_microbatch(trainer);
  double message = 0.0;
  if (layout.stages > 1) {
    const std::array<int, 2> ends = first_two_stages(world, layout);
    // An activation is about rows x the model's input width (the first boundary's width is the model's concern).
    message = runtime::one_way_message_seconds(
        world, ends[0], ends[1], static_cast<int64_t>(rows * static_cast<double>(trainer.config().model.inputs)));
  }
  runtime::MeasuredPoint point;
  point.rows = rows;
  comm::agree_or_throw(world, "sluice train --profile", comm::capture_failure([&] {
                         const schedule::Schedule compute = schedule::compute_only(trainer.parts().lowered);
                         point.costs = runtime::costs_from_busy(busy, runtime::count_compute_actions(compute), message);
                       }));
  return point;
}

// Collective: the same layout and schedule with `microbatches` micro-batches (another size per micro-batch), run
// for a few steps on step 0's batch in a trainer of its own (the trained one is left as it is), and measured.
runtime::MeasuredPoint measure_other_size(MPI_Comm world, const runtime::Trainer& trained, data::DataSource& source,
                                          int microbatches) {
  config::Config cfg = trained.config();  // auto already resolved: the same schedule, chunks and recompute
  cfg.pipeline.microbatches = microbatches;
  runtime::Trainer probe(world, cfg, trained.parts().custom_layers);
  probe.start();
  const int64_t rows = cfg.data.batch / trained.layout().data_parallel;
  std::vector<float> inputs(static_cast<size_t>(rows * source.input_features()));
  std::vector<float> targets(static_cast<size_t>(rows * source.target_features()));
  comm::agree_or_throw(world, "reading the profile's batch", comm::capture_failure([&] {
                         source.batch(0, trained.layout().replica * rows, rows, inputs.data(), targets.data());
                       }));
  for (int step = 0; step < kSecondSizeSteps; ++step) probe.train_step(inputs.data(), targets.data(), rows);
  return measure(world, probe);
}

}  // namespace

void write_cost_profile(MPI_Comm world, const runtime::Trainer& trainer, data::DataSource& source,
                        const std::string& path) {
  const config::Config& cfg = trainer.config();
  const runtime::MeasuredPoint configured = measure(world, trainer);
  const int batch = static_cast<int>(cfg.data.batch / trainer.layout().data_parallel);
  const int other = runtime::second_microbatch_count(batch, cfg.pipeline.microbatches);
  const std::string measured_with = config::schedule_setting_name(cfg.pipeline.schedule) + " stages " +
                                    std::to_string(trainer.layout().stages) + " chunks " +
                                    std::to_string(cfg.pipeline.chunks);
  const int virtual_stages = trainer.layout().stages * cfg.pipeline.chunks;
  runtime::MeasuredPoint second;
  if (other > 0) second = measure_other_size(world, trainer, source, other);
  comm::agree_or_throw(world, "sluice train --profile", comm::capture_failure([&] {
                         const schedule::CostProfile profile =
                             other > 0 ? runtime::fit_cost_profile(configured, second, virtual_stages, measured_with)
                                       : schedule::profile_from(configured.costs, virtual_stages, configured.rows,
                                                                measured_with);
                         if (trainer.layout().rank == 0) schedule::save_cost_profile(profile, path);
                       }));
}

}  // namespace sluice::tools
