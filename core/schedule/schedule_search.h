// `pipeline.schedule: auto`: every (schedule, chunks, micro-batch count, recompute) candidate simulated from plain
// numbers about the model, and the shortest step whose simulated peak memory fits a per-rank budget. Plain numbers,
// because core/schedule must not depend on core/model: the caller (sluice plan, the trainer) derives them from the
// model's shape (core/model/model_shape.h) or from measured costs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/schedule/cost_model.h"

namespace sluice {
namespace schedule {

// One pipeline stage (model chunk) of a partition, in plain numbers.
struct StageSizes {
  double forward_time_per_sample = 0;  // any time unit; I and W each cost as much again (B = 2F, split evenly)
  double static_bytes = 0;             // parameters + gradients + optimizer state
  double stash_bytes_per_sample = 0;   // what the stage keeps for backward per sample, no recompute
  double input_bytes_per_sample = 0;   // the stage's input per sample (all that full recompute keeps)
};

struct SearchModel {
  int ranks = 1;        // pipeline ranks P
  int batch = 1;        // samples per step per replica; a micro-batch count must divide it
  // The P·chunks stages of the partition a run with `chunks` chunks per rank would use, in stage order; empty when
  // the model cannot be cut that finely (those candidates are left out).
  std::function<std::vector<StageSizes>(int chunks)> stages;
  double budget_bytes = 0;  // per rank; 0 = no limit
  int max_chunks = 4;       // interleaved tries v = 2..max_chunks
  double transfer = 0;      // time one activation takes between ranks (its fixed part, with transfer_per_row)
  double transfer_per_row = 0;  // and per row of the micro-batch
  // I and W as multiples of F (the FLOP estimate: 1 and 1; a measured profile: its own ratios of the slopes).
  double input_ratio = 1;
  double weight_ratio = 1;
  // Fixed time of one micro-batch's F / I / W through the whole model whatever its rows, of which a stage pays its
  // share of the model's forward time per sample (a measured profile's fitted terms; the FLOP estimate has none, so
  // with it more, smaller micro-batches always look at least as fast).
  double forward_per_microbatch = 0;
  double input_per_microbatch = 0;
  double weight_per_microbatch = 0;
};

struct Candidate {
  std::string schedule;
  int chunks = 1;
  int microbatches = 1;
  bool recompute = false;  // full recompute
  double makespan = 0;     // simulated step, compute only (the costed lowering keeps posting order within 1%)
  double peak_bytes = 0;   // the largest over ranks of its stages' static bytes + its simulated peak stash
  bool fits = true;
};

// Every candidate, simulated. The simulator takes one cost per kind, so F is the slowest stage's forward of one
// micro-batch (a balanced partition keeps the others close) plus its share of forward_per_microbatch; full recompute adds F to I. Memory is per rank, from
// the stages the schedule places there.
std::vector<Candidate> evaluate_candidates(const SearchModel& model);

// The shortest fitting candidate (ties: fewer peak bytes, then table order). Throws Error(kInvalidArgument) naming
// the smallest peak when nothing fits the budget.
size_t choose_candidate(const std::vector<Candidate>& candidates, double budget_bytes);

// The table `sluice plan` and the trainer's start report print: one line per candidate, the chosen one marked.
std::string format_candidates(const std::vector<Candidate>& candidates, size_t chosen, double budget_bytes);

}  // namespace schedule
}  // namespace sluice
