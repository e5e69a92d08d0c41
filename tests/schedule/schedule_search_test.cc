// pipeline.schedule auto: the candidate table (closed forms for its memory column) and the choice over it.
#include "core/schedule/schedule_search.h"

#include <gtest/gtest.h>

#include "core/common/error.h"

namespace sluice {
namespace schedule {
namespace {

Candidate row(const char* name, double makespan, double peak, bool fits = true) {
  Candidate c;
  c.schedule = name;
  c.makespan = makespan;
  c.peak_bytes = peak;
  c.fits = fits;
  return c;
}

TEST(ScheduleSearchTest, ChoosesTheShortestCandidateThatFitsTheBudget) {
  const std::vector<Candidate> table = {row("gpipe", 30, 900), row("1f1b", 30, 500), row("zb-h1", 25, 700),
                                        row("zb-v", 20, 1200), row("interleaved", 25, 600)};
  EXPECT_EQ(choose_candidate(table, 0), 3u);     // no budget: the shortest
  EXPECT_EQ(choose_candidate(table, 1000), 4u);  // zb-v is over; zb-h1 and interleaved tie at 25: fewer bytes
  EXPECT_EQ(choose_candidate(table, 650), 4u);
  EXPECT_EQ(choose_candidate(table, 599), 1u);  // only 1f1b fits
  EXPECT_THROW(choose_candidate(table, 499), Error);
}

// Four equal stages at v = 1 (halves at v = 2): F = 1 per sample per stage; 250 static bytes, 200 stash bytes and
// 10 input bytes per sample each.
SearchModel small_model() {
  SearchModel model;
  model.ranks = 4;
  model.batch = 16;
  model.stages = [](int chunks) {
    StageSizes stage{1.0 / chunks, 250.0 / chunks, 200.0 / chunks, 10};
    return std::vector<StageSizes>(4 * chunks, stage);
  };
  model.max_chunks = 2;
  return model;
}

// Peak stash closed forms (notes/schedules.md): GPipe holds all m micro-batches, 1F1B rank 0 min(m, p); with rows =
// batch/m per micro-batch; 4 x 250 static bytes spread over 4 ranks. Full recompute keeps only each stage's input.
// Makespans: (m + p - 1)(F + B) with F = rows.
TEST(ScheduleSearchTest, CandidateTableFollowsTheClosedForms) {
  const SearchModel model = small_model();
  const std::vector<Candidate> table = evaluate_candidates(model);
  int checked = 0;
  for (const Candidate& c : table) {
    const double rows = 16.0 / c.microbatches;
    const double per_mb = c.recompute ? rows * 10 : rows * 200;
    if (c.schedule == "gpipe") {
      EXPECT_DOUBLE_EQ(c.peak_bytes, 250 + c.microbatches * per_mb) << c.microbatches;
      ++checked;
    }
    if (c.schedule == "1f1b") {
      EXPECT_DOUBLE_EQ(c.peak_bytes, 250 + std::min(c.microbatches, 4) * per_mb) << c.microbatches;
      const double f = rows, b = (c.recompute ? 3 : 2) * rows;
      EXPECT_DOUBLE_EQ(c.makespan, (c.microbatches + 3) * (f + b)) << c.microbatches;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * 2 * 5);  // 2 schedules x 2 recompute x 5 divisors of 16
  EXPECT_EQ(table.size(), (3u + 1u + 1u) * 5u * 2u);  // gpipe, 1f1b, zb-h1, interleaved v=2, zb-v
}

// The budget is a hard bound, and loosening it never makes the chosen step longer.
TEST(ScheduleSearchTest, ChosenCandidateFitsAndLooserBudgetsAreNeverSlower) {
  SearchModel model = small_model();
  const std::vector<Candidate> table = evaluate_candidates(model);
  double previous = 1e300;
  for (double budget = 300; budget <= 4000; budget += 50) {
    const size_t chosen = choose_candidate(table, budget);
    EXPECT_LE(table[chosen].peak_bytes, budget);
    for (const Candidate& c : table) {
      if (c.peak_bytes <= budget) {
        EXPECT_LE(table[chosen].makespan, c.makespan);
      }
    }
    EXPECT_LE(table[chosen].makespan, previous);
    previous = table[chosen].makespan;
  }
  EXPECT_THROW(choose_candidate(table, 259), Error);  // below the static bytes plus the smallest stash (250 + 10)
  EXPECT_NE(format_candidates(table, 0, 2000).find("-->"), std::string::npos);
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
