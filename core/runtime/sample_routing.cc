#include "core/runtime/sample_routing.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "core/comm/agreement.h"
#include "core/common/error.h"

namespace sluice::runtime {
namespace {

// This rank's own argument problem, if any (agreed before anything is sent).
std::optional<Error> check_arguments(const char* function, const float* inputs, const float* targets, int64_t count,
                                     int rank) {
  const std::string where = std::string(function) + " on rank " + std::to_string(rank) + ": ";
  if (count < 0) {
    return Error(ErrorCode::kInvalidArgument, where + "count is negative (" + std::to_string(count) + ")");
  }
  if (count > 0 && inputs == nullptr) {
    return Error(ErrorCode::kInvalidArgument,
                 where + "inputs is NULL with count " + std::to_string(count) + " (every rank passes its own samples)");
  }
  if (count > 0 && targets == nullptr) {
    return Error(ErrorCode::kInvalidArgument, where + "targets is NULL with count " + std::to_string(count) +
                                                  " (every rank passes its own samples)");
  }
  return std::nullopt;
}

// One side (inputs or targets) of every rank's samples, rank-major, broadcast from each contributing rank in turn.
// Every rank takes part in every broadcast; only a rank that keeps the side keeps the result.
std::vector<float> gather_side(comm::Group& world, const std::vector<int64_t>& counts, int64_t total,
                               const float* mine, int64_t features, bool keep) {
  std::vector<float> all(keep ? static_cast<size_t>(total * features) : 0);
  std::vector<float> scratch;
  int64_t offset = 0;
  for (int source = 0; source < static_cast<int>(counts.size()); ++source) {
    const int64_t n = counts[source] * features;
    if (n == 0) continue;
    float* buffer = all.data() + offset;
    if (!keep) {
      scratch.resize(static_cast<size_t>(n));
      buffer = scratch.data();
    }
    if (source == world.rank()) std::memcpy(buffer, mine, static_cast<size_t>(n) * sizeof(float));
    world.broadcast(buffer, n, source);
    if (keep) offset += n;
  }
  return all;
}

}  // namespace

RoutedSamples route_samples(Trainer& trainer, const char* function, const float* inputs, const float* targets,
                            int64_t count, bool keeps_inputs, bool keeps_targets) {
  const int rank = trainer.layout().rank;
  comm::agree_or_throw(trainer.mpi().world(), Trainer::arguments_of(function),
                       check_arguments(function, inputs, targets, count, rank));
  comm::Group& world = trainer.mpi().world_group();
  // Counts travel as doubles (the group's all-gather): exact up to 2^53 samples.
  const double mine = static_cast<double>(count);
  const std::vector<double> gathered = world.all_gather(&mine, 1);
  std::vector<int64_t> counts(gathered.size());
  RoutedSamples routed;
  for (size_t r = 0; r < gathered.size(); ++r) {
    counts[r] = static_cast<int64_t>(gathered[r]);
    routed.count += counts[r];
  }
  routed.inputs = gather_side(world, counts, routed.count, inputs, trainer.input_features(), keeps_inputs);
  routed.targets = gather_side(world, counts, routed.count, targets, trainer.output_features(), keeps_targets);
  return routed;
}

}  // namespace sluice::runtime
