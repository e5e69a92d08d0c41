#include "tools/sluice/train_profile.h"

#include <array>
#include <vector>

#include "core/comm/agreement.h"
#include "core/runtime/measured_costs.h"
#include "core/runtime/message_latency.h"
#include "core/schedule/cost_profile.h"

namespace sluice::tools {
namespace {

// World ranks of replica 0's stages 0 and 1 (whatever pipeline.rank_order made of them).
std::array<int, 2> first_two_stages(MPI_Comm world, const config::Layout& layout) {
  const int mine[2] = {layout.stage_rank, layout.replica};
  std::vector<int> all(2 * static_cast<size_t>(layout.world));
  MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, world);
  std::array<int, 2> ranks{0, 0};
  for (int r = 0; r < layout.world; ++r)
    if (all[2 * r + 1] == 0 && all[2 * r] < 2) ranks[all[2 * r]] = r;
  return ranks;
}

}  // namespace

void write_cost_profile(MPI_Comm world, const runtime::Trainer& trainer, const std::string& path) {
  const config::Config& cfg = trainer.config();
  const config::Layout& layout = trainer.layout();
  // Busy seconds per kind summed over one pipeline: every replica runs the same schedule, so the world's sum over
  // the replicas' count.
  runtime::KindSeconds busy = trainer.last_counters().busy_seconds;
  MPI_Allreduce(MPI_IN_PLACE, busy.data(), static_cast<int>(busy.size()), MPI_DOUBLE, MPI_SUM, world);
  for (double& seconds : busy) seconds /= layout.data_parallel;
  const double rows = static_cast<double>(cfg.data.batch) / layout.data_parallel / cfg.pipeline.microbatches;
  double message = 0.0;
  if (layout.stages > 1) {
    const std::array<int, 2> ends = first_two_stages(world, layout);
    // An activation is about rows x the model's input width (the first boundary's width is the model's concern).
    message = runtime::one_way_message_seconds(world, ends[0], ends[1],
                                               static_cast<int64_t>(rows * static_cast<double>(cfg.model.inputs)));
  }
  comm::agree_or_throw(world, "sluice train --profile", comm::capture_failure([&] {
                         const schedule::Schedule compute = schedule::compute_only(trainer.lowered_schedule());
                         const schedule::CostModel costs =
                             runtime::costs_from_busy(busy, runtime::count_compute_actions(compute), message);
                         const std::string measured_with =
                             cfg.pipeline.schedule + " stages " + std::to_string(layout.stages) + " chunks " +
                             std::to_string(cfg.pipeline.chunks);
                         if (layout.rank == 0)
                           schedule::save_cost_profile(
                               schedule::profile_from(costs, compute.num_stages(), rows, measured_with), path);
                       }));
}

}  // namespace sluice::tools
