// Internal: lowering's last step for a schedule with skips (Schedule::skips) whose two stages sit on different
// ranks. Each such skip gets, per micro-batch, SEND_SKIP on the producer's rank and RECV_SKIP on the reader's
// (before the reader's F), and, where the reader's backward runs, SEND_SKIP_GRAD on the reader's rank and
// RECV_SKIP_GRAD on the producer's (before the producer's backward). Only the two ranks of a skip see its
// messages: the stages between them send nothing more.
//
// Why it cannot deadlock: a blocking dry run of the chain's lowered lists gives one global order in which they
// complete (rendezvous_dry_run's ticks). Each skip message is put into that order just before the action that
// needs it (the reader's F, the producer's backward), on both of its ranks: after everything its rank completed
// earlier, before everything later. Its data was made earlier in that order (the main chain carries the
// micro-batch from producer to reader, and its gradient back), so the SEND sits after the compute that makes it.
// The extended order is still one every rank's list follows, so the blocking run completes with every pair met.
#pragma once

#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {
namespace detail {

// `lowered`: the chain's lowered lists (no skip messages yet), valid; `skips` become its Schedule::skips.
// Throws sluice::Error(kInvalidArgument) naming a skip whose stages are out of order or out of range.
void add_skip_messages(Schedule& lowered, const std::vector<SkipEdge>& skips);

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
