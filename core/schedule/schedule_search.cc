#include "core/schedule/schedule_search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/common/error.h"
#include "core/schedule/generators.h"
#include "core/schedule/simulator.h"

namespace sluice {
namespace schedule {
namespace {

struct Shape {
  const char* schedule;
  int chunks;
};

// Every schedule kind with the chunk counts it runs: the one-chunk kinds first, then (with more than one rank; with one,
// more chunks only add the same work in smaller pieces) the looped kinds up to max_chunks and the V, in table order.
std::vector<Shape> shapes(int ranks, int max_chunks) {
  std::vector<Shape> list;
  for (const ScheduleKindInfo& kind : schedule_kinds())
    if (kind.chunks == ChunkRule::kExactlyOne) list.push_back({kind.name, 1});
  if (ranks == 1) return list;
  for (const ScheduleKindInfo& kind : schedule_kinds()) {
    if (kind.chunks == ChunkRule::kAtLeastTwo)
      for (int v = 2; v <= max_chunks; ++v) list.push_back({kind.name, v});
    if (kind.chunks == ChunkRule::kExactlyTwo) list.push_back({kind.name, 2});
  }
  return list;
}

std::vector<int> divisors(int n) {
  std::vector<int> list;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) list.push_back(d);
  return list;
}

// Each rank's static bytes plus the peak of its stages' stash, whichever rank is largest.
double peak_bytes(const Schedule& compute, const std::vector<StageSizes>& sizes, double rows, bool recompute) {
  std::vector<double> stash(sizes.size()), static_bytes(compute.ranks, 0.0);
  for (size_t s = 0; s < sizes.size(); ++s) {
    stash[s] = rows * (recompute ? sizes[s].input_bytes_per_sample : sizes[s].stash_bytes_per_sample);
    static_bytes[compute.rank_of(static_cast<int>(s))] += sizes[s].static_bytes;
  }
  const std::vector<double> peaks = peak_stash(compute, stash);
  double largest = 0.0;
  for (int r = 0; r < compute.ranks; ++r) largest = std::max(largest, static_bytes[r] + peaks[r]);
  return largest;
}

Candidate evaluate(const SearchModel& model, const Shape& shape, const std::vector<StageSizes>& sizes,
                   int microbatches, bool recompute) {
  const double rows = static_cast<double>(model.batch) / microbatches;
  double slowest = 0.0, total = 0.0;
  for (const StageSizes& stage : sizes) {
    slowest = std::max(slowest, stage.forward_time_per_sample);
    total += stage.forward_time_per_sample;
  }
  const double share = total > 0.0 ? slowest / total : 1.0 / sizes.size();  // of the model, in the slowest stage
  const double forward = slowest * rows;
  CostModel costs;
  costs.forward = model.forward_per_microbatch * share + forward;
  costs.backward_input =
      model.input_per_microbatch * share + forward * model.input_ratio + (recompute ? costs.forward : 0.0);
  costs.backward_weight = model.weight_per_microbatch * share + forward * model.weight_ratio;
  costs.latency = model.transfer + model.transfer_per_row * rows;
  const Schedule compute = make_schedule(shape.schedule, model.ranks, microbatches, shape.chunks);
  Candidate c;
  c.schedule = shape.schedule;
  c.chunks = shape.chunks;
  c.microbatches = microbatches;
  c.recompute = recompute;
  c.makespan = simulate(compute, costs).makespan;
  c.peak_bytes = peak_bytes(compute, sizes, rows, recompute);
  c.fits = model.budget_bytes <= 0 || c.peak_bytes <= model.budget_bytes;
  return c;
}

}  // namespace

std::vector<Candidate> evaluate_candidates(const SearchModel& model) {
  if (model.ranks < 1 || model.batch < 1 || model.max_chunks < 1 || !model.stages)
    throw Error(ErrorCode::kInvalidArgument, "schedule search: ranks, batch and max chunks must be positive and stage sizes given");
  std::vector<Candidate> table;
  for (const Shape& shape : shapes(model.ranks, model.max_chunks)) {
    const std::vector<StageSizes> sizes = model.stages(shape.chunks);
    if (sizes.empty()) continue;  // no such partition (fewer layers than stages)
    if (sizes.size() != static_cast<size_t>(model.ranks * shape.chunks))
      throw Error(ErrorCode::kInvalidArgument, "schedule search: " + std::to_string(sizes.size()) + " stage sizes for " +
                                                   std::to_string(model.ranks * shape.chunks) + " stages");
    for (int m : divisors(model.batch))
      for (bool recompute : {false, true}) table.push_back(evaluate(model, shape, sizes, m, recompute));
  }
  return table;
}

size_t choose_candidate(const std::vector<Candidate>& candidates, double budget_bytes) {
  size_t best = candidates.size(), smallest = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (c.peak_bytes < candidates[smallest].peak_bytes) smallest = i;
    if (budget_bytes > 0 && c.peak_bytes > budget_bytes) continue;
    if (best == candidates.size() || c.makespan < candidates[best].makespan ||
        (c.makespan == candidates[best].makespan && c.peak_bytes < candidates[best].peak_bytes))
      best = i;
  }
  if (best == candidates.size())
    throw Error(ErrorCode::kInvalidArgument,
                "pipeline.schedule auto: no schedule fits pipeline.memory_budget " +
                    std::to_string(static_cast<long long>(budget_bytes)) +
                    " bytes per rank" +
                    (candidates.empty() ? std::string()
                                        : "; the smallest needs " +
                                              std::to_string(static_cast<long long>(std::ceil(candidates[smallest].peak_bytes))) +
                                              " (" + candidates[smallest].schedule + ")"));
  return best;
}

std::string format_candidates(const std::vector<Candidate>& candidates, size_t chosen, double budget_bytes) {
  std::ostringstream out;
  out << "pipeline.schedule auto: " << candidates.size() << " candidates, budget "
      << (budget_bytes > 0 ? std::to_string(static_cast<long long>(budget_bytes)) + " bytes per rank" : "none")
      << "\n    schedule     v  micro-batches  recompute  simulated step  peak bytes/rank  fits\n";
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    char line[160];
    std::snprintf(line, sizeof line, "%s %-12s %-2d %-14d %-10s %-15.6g %-16.0f %s\n", i == chosen ? "-->" : "   ",
                  c.schedule.c_str(), c.chunks, c.microbatches, c.recompute ? "full" : "none", c.makespan,
                  c.peak_bytes, c.fits ? "yes" : "no");
    out << line;
  }
  return out.str();
}

}  // namespace schedule
}  // namespace sluice
