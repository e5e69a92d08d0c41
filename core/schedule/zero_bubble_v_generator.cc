// ZB-V (arXiv 2401.10241): two chunks per rank in a V, backward split into I and W, W of a stage in micro-batch
// order (so gradients add up in the sequential order). Shaped like PyTorch's ScheduleZBVZeroBubble, including
// its answer to few micro-batches: with m < 2p - 1 the V is not full, and clamping each phase to m shifts the
// phases against each other (p=8, m=10 took 72 units instead of 70 with F = I = W). Instead every rank builds the
// schedule of the full V, n = max(m, 2p - 1) micro-batches, and leaves out the micro-batches >= m. Removing work
// from a valid order keeps it valid (every dependency of a kept action is on a kept micro-batch), and it also
// makes m < p work. Below 2p - 1 the fixed phases still leave gaps, so there greedy play-outs
// (zero_bubble_v_greedy.cc) compete, and the shortest order wins. Like the zero-bubble authors' generator (zbv.py,
// try_v_schedule, which tries several ways of filling bubbles with W and keeps the best), this is a small search:
// a few priority orders, each under two memory caps (below). It stays a deterministic function of (p, m).
#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "core/schedule/generator_kernels.h"
#include "core/schedule/simulator.h"
#include "core/schedule/zero_bubble_v_greedy.h"

namespace sluice {
namespace schedule {
namespace detail {
namespace {

// One rank's list. Chunk 0 is the descending arm of the V (stage r), chunk 1 the ascending arm (stage 2p-1-r).
class ZeroBubbleVRank {
 public:
  ZeroBubbleVRank(int ranks, int rank, int microbatches, std::vector<Action>& list)
      : ranks_(ranks), rank_(rank), planned_(std::max(microbatches, 2 * ranks - 1)), kept_(microbatches),
        first_(rank), second_(2 * ranks - 1 - rank), list_(list) {}

  void build() {
    // Warm-up: fill the V's descending arm, then alternate arms until the first backward can start.
    for (int i = 0; i < 2 * (ranks_ - rank_) - 1; ++i) push(first_, ActionKind::F, forwards_first_);
    for (int i = 0; i < rank_; ++i) {
      push(second_, ActionKind::F, forwards_second_);
      push(first_, ActionKind::F, forwards_first_);
    }
    for (int i = 0; i < ranks_ - rank_; ++i) {
      push(second_, ActionKind::F, forwards_second_);
      input_and_weight(second_, inputs_second_, weights_second_);
    }
    // Steady state: one F and one I+W per arm.
    while (forwards_second_ < forwards_first_ || forwards_first_ < planned_) {
      if (forwards_first_ < planned_) push(first_, ActionKind::F, forwards_first_);
      input_and_weight(first_, inputs_first_, weights_first_);
      push(second_, ActionKind::F, forwards_second_);
      input_and_weight(second_, inputs_second_, weights_second_);
    }
    // Cool-down: I's first (the critical path); the W's fill the gaps while the next I travels back.
    for (int i = 0; i < rank_; ++i) {
      push(first_, ActionKind::I, inputs_first_);
      push(second_, ActionKind::I, inputs_second_);
    }
    for (int i = 0; i < ranks_ - rank_; ++i) {
      push(first_, ActionKind::I, inputs_first_);
      push(first_, ActionKind::W, weights_first_);
    }
    while (weights_second_ < planned_) push(second_, ActionKind::W, weights_second_);
    while (weights_first_ < planned_) push(first_, ActionKind::W, weights_first_);
  }

 private:
  // Counts the action in the full V's plan, and keeps it only if its micro-batch exists.
  void push(int stage, ActionKind kind, int& counter) {
    if (counter < kept_) list_.push_back({stage, kind, counter});
    ++counter;
  }
  void input_and_weight(int stage, int& inputs, int& weights) {
    push(stage, ActionKind::I, inputs);
    push(stage, ActionKind::W, weights);
  }

  const int ranks_, rank_, planned_, kept_, first_, second_;
  std::vector<Action>& list_;
  int forwards_first_ = 0, forwards_second_ = 0;
  int inputs_first_ = 0, inputs_second_ = 0;
  int weights_first_ = 0, weights_second_ = 0;
};

}  // namespace

namespace {

Schedule zero_bubble_v_phases(int ranks, int microbatches) {
  Schedule schedule = empty_schedule("zb-v", ranks, microbatches, 2, v_placement(ranks));
  for (int rank = 0; rank < ranks; ++rank) {
    schedule.actions[rank].reserve(6 * static_cast<size_t>(microbatches));
    ZeroBubbleVRank(ranks, rank, microbatches, schedule.actions[rank]).build();
  }
  return schedule;
}

// Whether `candidate` beats `best` with F = I = W = 1: shorter, or as long with no rank holding more and one less.
bool better(const SimulationResult& candidate, const SimulationResult& best) {
  if (candidate.makespan != best.makespan) return candidate.makespan < best.makespan;
  bool less = false;
  for (size_t rank = 0; rank < best.peak_inflight.size(); ++rank) {
    if (candidate.peak_inflight[rank] > best.peak_inflight[rank]) return false;
    less = less || candidate.peak_inflight[rank] < best.peak_inflight[rank];
  }
  return less;
}

// The priority orders the greedy tries, first to last (a later one replaces an earlier one only if better).
// Forwards first (the V's ascending arm, then the descending one) wins nearly everywhere; backwards first, the
// ascending arm's I first, or an I between the two forwards in the few cases where the others leave a gap (found
// by comparing with the authors' generator over p <= 16, m < 2p - 1; tests/schedule/reference/).
constexpr ActionKind kF = ActionKind::F, kI = ActionKind::I;
constexpr std::array<std::array<Piece, 4>, 4> kPriorities = {{
    {{{kF, 1}, {kF, 0}, {kI, 0}, {kI, 1}}},
    {{{kI, 0}, {kI, 1}, {kF, 1}, {kF, 0}}},
    {{{kF, 1}, {kF, 0}, {kI, 1}, {kI, 0}}},
    {{{kF, 1}, {kI, 0}, {kF, 0}, {kI, 1}}},
}};

// Two caps on the (stage, micro-batch) pairs a rank holds: the fixed phases' own per-rank peaks (no rank needs more
// than with PyTorch's order), then every rank the largest of them. The second never raises the largest peak over
// ranks, the memory a run must provision for, and with few micro-batches it lets the first ranks run ahead:
// p = 16, m = 16 needs it to match the authors' order. Per-rank caps come first, so at equal length they win.
std::array<std::vector<int>, 2> caps(const std::vector<int>& phase_peaks) {
  const int largest = *std::max_element(phase_peaks.begin(), phase_peaks.end());
  return {phase_peaks, std::vector<int>(phase_peaks.size(), largest)};
}

// No order is shorter with F = I = W = 1: the last rank's first forward arrives at p - 1 and it then has 6m units
// of work; the last micro-batch leaves rank 0 no earlier than m - 1, then crosses 2p stages forward, 2p back and
// its W. Reaching it (usual once m >= p) ends the search early, which matters at large p.
double shortest_possible(int ranks, int microbatches) {
  return std::max(6.0 * microbatches + ranks - 1, 4.0 * ranks + microbatches);
}

}  // namespace

Schedule zero_bubble_v(int ranks, int microbatches) {
  Schedule best = zero_bubble_v_phases(ranks, microbatches);
  if (microbatches >= 2 * ranks - 1) return best;
  SimulationResult best_result = simulate(best);
  const std::array<std::vector<int>, 2> cap_list = caps(best_result.peak_inflight);
  const double bound = shortest_possible(ranks, microbatches);
  for (const std::vector<int>& cap : cap_list) {
    for (const std::array<Piece, 4>& priority : kPriorities) {
      if (best_result.makespan <= bound) return best;
      const int deadline = static_cast<int>(best_result.makespan);  // whole units: F = I = W = 1
      std::optional<Schedule> candidate = zero_bubble_v_greedy(ranks, microbatches, priority, cap, deadline);
      if (!candidate) continue;
      SimulationResult result = simulate(*candidate);
      if (better(result, best_result)) {
        best = std::move(*candidate);
        best_result = std::move(result);
      }
    }
  }
  return best;
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
