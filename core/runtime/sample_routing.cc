#include "core/runtime/sample_routing.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "core/comm/agreement.h"
#include "core/common/error.h"
#include "core/common/non_finite.h"

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

// Every world rank's count and place, as all-gathered: what each rank needs to lay out the call's global order.
struct Submitter {
  int world_rank = 0;
  int64_t count = 0;
  int replica = 0;
  int stage_rank = 0;
  int block = 0;
};

// One submitting group: the ranks of one (replica, pipeline rank), one per block, which submit the same samples'
// blocks. `first_world_rank` orders the groups (with one block: the world rank, the order without a split).
struct SubmitGroup {
  int replica = 0;
  int stage_rank = 0;
  int first_world_rank = 0;
  int64_t count = 0;
};

std::vector<Submitter> gather_submitters(Trainer& trainer, int64_t count) {
  const config::Layout& layout = trainer.layout();
  // Small integers travel exactly as doubles (the group's all-gather; counts exact up to 2^53).
  const double mine[4] = {static_cast<double>(count), static_cast<double>(layout.replica),
                          static_cast<double>(layout.stage_rank), static_cast<double>(layout.block)};
  const std::vector<double> all = trainer.parts().mpi->world_group().all_gather(mine, 4);
  std::vector<Submitter> out(all.size() / 4);
  for (size_t r = 0; r < out.size(); ++r) {
    out[r] = {static_cast<int>(r), static_cast<int64_t>(all[4 * r]), static_cast<int>(all[4 * r + 1]),
              static_cast<int>(all[4 * r + 2]), static_cast<int>(all[4 * r + 3])};
  }
  return out;
}

// The groups in the call's global order. Every block of a group must hand in the same count (its blocks of the same
// samples); otherwise Error(kInvalidArgument) naming both ranks, thrown alike on every rank (all know all counts).
std::vector<SubmitGroup> submit_groups(const std::vector<Submitter>& submitters, const char* function) {
  std::vector<SubmitGroup> groups;
  for (const Submitter& s : submitters) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const SubmitGroup& g) {
      return g.replica == s.replica && g.stage_rank == s.stage_rank;
    });
    if (it == groups.end()) {
      groups.push_back({s.replica, s.stage_rank, s.world_rank, s.count});
      continue;
    }
    if (it->count != s.count) {
      const Submitter& other = submitters[static_cast<size_t>(it->first_world_rank)];
      throw Error(ErrorCode::kInvalidArgument,
                  std::string(function) + ": world rank " + std::to_string(other.world_rank) + " (block " +
                      std::to_string(other.block) + ") submitted " + std::to_string(other.count) +
                      " samples but world rank " + std::to_string(s.world_rank) + " (block " +
                      std::to_string(s.block) + ") of the same replica and stage submitted " +
                      std::to_string(s.count) + "; every block of a sample must be submitted (the same count on "
                      "every rank of a domain group)");
    }
  }
  std::sort(groups.begin(), groups.end(),
            [](const SubmitGroup& a, const SubmitGroup& b) { return a.first_world_rank < b.first_world_rank; });
  return groups;
}

// At replica 0's audience rank: the call's samples of this block in the global order of `groups`, from each
// replica's text (its ranks' samples in pipeline-rank order, as the pipeline gather left them).
std::vector<float> in_global_order(const std::vector<std::string>& per_replica, const std::vector<SubmitGroup>& groups,
                                   int64_t features, int64_t total) {
  std::vector<float> all(static_cast<size_t>(total * features));
  const size_t row_bytes = static_cast<size_t>(features) * sizeof(float);
  char* out = reinterpret_cast<char*>(all.data());
  for (const SubmitGroup& g : groups) {
    int64_t before = 0;  // rows of the pipeline ranks before this one in its replica's text
    for (const SubmitGroup& h : groups) {
      if (h.replica == g.replica && h.stage_rank < g.stage_rank) before += h.count;
    }
    const std::string& text = per_replica[static_cast<size_t>(g.replica)];
    std::memcpy(out, text.data() + before * row_bytes, static_cast<size_t>(g.count) * row_bytes);
    out += g.count * row_bytes;
  }
  return all;
}

// One side (inputs or targets) of the call's samples, in the global order, delivered to the ranks of pipeline rank
// `audience` (the first or the last stage's rank) of every replica, each getting its own block only. Three steps,
// each over ranks of this rank's block: a gather over the pipeline (the ranks of this replica and block) at the
// audience, a gather of those over the audience's data-parallel group (the audience ranks of this block in every
// replica) at replica 0, and a broadcast from there over the same group. No block leaves its block index.
std::vector<float> route_side(Trainer& trainer, const float* mine, int64_t count, int64_t features, int64_t total,
                              const std::vector<SubmitGroup>& groups, int audience) {
  const size_t bytes = static_cast<size_t>(count * features) * sizeof(float);
  const std::string packed = count > 0 ? std::string(reinterpret_cast<const char*>(mine), bytes) : std::string();
  const std::vector<std::string> stages = trainer.parts().mpi->pipeline_group().gather_text(packed, audience);
  if (trainer.layout().stage_rank != audience) return {};
  std::string joined;
  for (const std::string& part : stages) joined += part;
  comm::Group& replicas = trainer.parts().mpi->data_parallel_group();
  const std::vector<std::string> per_replica = replicas.gather_text(joined, 0);
  std::vector<float> all = replicas.rank() == 0 ? in_global_order(per_replica, groups, features, total)
                                                : std::vector<float>(static_cast<size_t>(total * features));
  replicas.broadcast(all.data(), total * features, 0);
  return all;
}

}  // namespace

RoutedSamples route_samples(Trainer& trainer, const char* function, const float* inputs, const float* targets,
                            int64_t count, bool keeps_inputs, bool keeps_targets) {
  const int rank = trainer.layout().rank;
  comm::agree_or_throw(trainer.parts().mpi->world(), arguments_of(function),
                       check_arguments(function, inputs, targets, count, rank, trainer.parts().input_features,
                                       trainer.parts().output_features));
  const std::vector<SubmitGroup> groups = submit_groups(gather_submitters(trainer, count), function);
  RoutedSamples routed;
  for (const SubmitGroup& g : groups) routed.count += g.count;
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
  routed.inputs = route_side(trainer, inputs, count, trainer.parts().input_features, routed.count, groups,
                             stage_to_rank.front());
  routed.targets = route_side(trainer, targets, count, trainer.parts().output_features, routed.count, groups,
                              stage_to_rank.back());
  // The audiences are by construction the ranks that keep a side (the ranks of the first and last stage).
  if (keeps_inputs == routed.inputs.empty() || keeps_targets == routed.targets.empty()) {
    throw Error(ErrorCode::kInternal, "sample routing: the ranks receiving samples are not the ones keeping them");
  }
  return routed;
}

}  // namespace sluice::runtime
