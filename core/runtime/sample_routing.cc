#include "core/runtime/sample_routing.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "core/comm/agreement.h"
#include "core/common/error.h"
#include "core/common/non_finite.h"
#include "core/runtime/domain_support.h"

namespace sluice::runtime {
namespace {

// This rank's own argument problem, if any (agreed before anything is sent). A non-finite sample is refused here:
// once held it would be saved with the store and fail every later training call that draws it.
std::optional<Error> check_arguments(const char* function, const float* inputs, const float* targets, int64_t count,
                                     int rank, int64_t input_features, int64_t output_features) {
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
  std::string problem = first_non_finite(inputs, count, input_features, "inputs");
  if (problem.empty()) problem = first_non_finite(targets, count, output_features, "targets");
  if (!problem.empty()) return Error(ErrorCode::kInvalidArgument, where + problem + "; nothing of this call is kept");
  return std::nullopt;
}

// One side (inputs or targets) of every rank's samples, rank-major, delivered to the ranks of pipeline rank
// `audience` (the first or the last stage's rank) in every replica. Two steps over the project's groups: a gather
// over the world at replica 0's rank of the audience (world rank = pipeline rank: replicas are consecutive blocks),
// then a broadcast from it over its data-parallel group (the audience's ranks of all replicas). Every sample thus
// travels once to the gathering rank and once to each other replica, not to the middle stages.
std::vector<float> route_side(Trainer& trainer, const float* mine, int64_t count, int64_t features, int64_t total,
                              int audience) {
  const size_t bytes = static_cast<size_t>(count * features) * sizeof(float);
  const std::string packed = count > 0 ? std::string(reinterpret_cast<const char*>(mine), bytes) : std::string();
  // gather_text carries any bytes; rank order is the global order.
  const std::vector<std::string> gathered = trainer.parts().mpi->world_group().gather_text(packed, audience);
  if (trainer.layout().stage_rank != audience) return {};
  std::vector<float> all(static_cast<size_t>(total * features));
  if (trainer.layout().rank == audience) {
    char* out = reinterpret_cast<char*>(all.data());
    for (const std::string& part : gathered) {
      std::memcpy(out, part.data(), part.size());
      out += part.size();
    }
  }
  trainer.parts().mpi->data_parallel_group().broadcast(all.data(), total * features, 0);
  return all;
}

}  // namespace

RoutedSamples route_samples(Trainer& trainer, const char* function, const float* inputs, const float* targets,
                            int64_t count, bool keeps_inputs, bool keeps_targets) {
  refuse_whole_samples_on_split(trainer.layout().blocks, function);  // the same on every rank
  const int rank = trainer.layout().rank;
  comm::agree_or_throw(trainer.parts().mpi->world(), arguments_of(function),
                       check_arguments(function, inputs, targets, count, rank, trainer.parts().input_features,
                                       trainer.parts().output_features));
  // Counts travel as doubles (the group's all-gather): exact up to 2^53 samples.
  const double mine = static_cast<double>(count);
  const std::vector<double> gathered = trainer.parts().mpi->world_group().all_gather(&mine, 1);
  std::vector<int64_t> counts(gathered.size());
  RoutedSamples routed;
  for (size_t r = 0; r < gathered.size(); ++r) {
    counts[r] = static_cast<int64_t>(gathered[r]);
    routed.count += counts[r];
  }
  if (routed.count == 0) return routed;
  // The gathers carry a call's samples in one message of int-counted bytes. Every rank knows the total, so every
  // rank refuses alike (no rank may stop before a gather the others are in).
  const int64_t widest = std::max(trainer.parts().input_features, trainer.parts().output_features);
  if (routed.count * widest * static_cast<int64_t>(sizeof(float)) > std::numeric_limits<int>::max()) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(function) + ": one call's " + std::to_string(routed.count) +
                    " samples exceed 2 GiB per side; submit them in several calls");
  }
  const std::vector<int>& stage_to_rank = trainer.parts().lowered.stage_to_rank;
  routed.inputs = route_side(trainer, inputs, count, trainer.parts().input_features, routed.count, stage_to_rank.front());
  routed.targets = route_side(trainer, targets, count, trainer.parts().output_features, routed.count, stage_to_rank.back());
  // The audiences are by construction the ranks that keep a side (the ranks of the first and last stage).
  if (keeps_inputs == routed.inputs.empty() || keeps_targets == routed.targets.empty()) {
    throw Error(ErrorCode::kInternal, "sample routing: the ranks receiving samples are not the ones keeping them");
  }
  return routed;
}

}  // namespace sluice::runtime
