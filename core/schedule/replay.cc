#include "core/schedule/replay.h"

#include <algorithm>
#include <vector>

#include "core/common/error.h"
#include "core/schedule/blocked_table.h"
#include "core/schedule/kind_traits.h"
#include "core/schedule/replay_workspace.h"
#include "core/schedule/simulator.h"

namespace sluice {
namespace schedule {
namespace {

// Both ends of one message; a time < 0 means "not yet". 24 bytes: at p = 512, m = 4096 there are 8 million, and
// the table is the replay's main cache load (the rank stopped on a message is kept per rank instead).
struct Message {
  double send_post = -1.0;
  double recv_post = -1.0;
  double complete = -1.0;
};

constexpr size_t kNoMessage = ~size_t{0};

// Walks every rank's list in order under one transfer mode. A rank advances as far as it can; it stops at a
// compute action whose input has not arrived, or (blocking) at an unmatched SEND/RECV, and is queued again only
// when that message completes, so the replay is linear in the actions (p=512 stays fast). Messages are numbered by
// (sender stage, direction, micro-batch), so both ends find the same one without a search.
class Replayer {
 public:
  // `messages`: any earlier replay's table, refilled here (its pages are already there).
  Replayer(const Schedule& schedule, const CostModel& costs, TransferMode mode, std::vector<Message>& messages)
      : s_(schedule), costs_(costs), mode_(mode), transfer_(transfer_time(costs)),
        chain_size_(table_size(schedule)),
        messages_(reset(messages, chain_size_ + skip_table_size(schedule))), cursor_(schedule.ranks, 0),
        waiting_on_(schedule.ranks, kNoMessage),
        clock_(schedule.ranks, 0.0), last_done_(schedule.ranks, 0.0), oldest_(schedule.ranks, 0) {}

  double run() {
    for (int rank = 0; rank < s_.ranks; ++rank) ready_.push_back(rank);
    while (!ready_.empty()) {
      const int rank = ready_.back();
      ready_.pop_back();
      advance(rank);
      if (mode_ == TransferMode::kPostingOrder) settle(rank);
    }
    double makespan = 0.0;
    for (int rank = 0; rank < s_.ranks; ++rank) {
      if (cursor_[rank] < s_.actions[rank].size() ||
          (mode_ == TransferMode::kPostingOrder && oldest_open(rank) != nullptr))
        throw Error(ErrorCode::kInvalidArgument,
                    "replay of schedule '" + s_.name + "' under " + transfer_mode_name(mode_) +
                        " deadlocks: rank " + std::to_string(rank) + " stops at action " +
                        std::to_string(cursor_[rank]));
      makespan = std::max({makespan, clock_[rank], last_done_[rank]});
    }
    return makespan;
  }

 private:
  static std::vector<Message>& reset(std::vector<Message>& messages, size_t size) {
    messages.assign(size, Message{});
    return messages;
  }
  // Rows are (sender stage, direction): blocked_table.h.
  static size_t table_size(const Schedule& s) { return detail::blocked_table_size(2 * s.num_stages(), s.microbatches); }
  // Skip messages (Schedule::skips) after the chain's: one per (skip, direction, micro-batch).
  static size_t skip_table_size(const Schedule& s) { return 2 * s.skips.size() * static_cast<size_t>(s.microbatches); }
  size_t skip_key(int from, int to, bool forward, int microbatch) const {
    size_t skip = 0;
    while (skip < s_.skips.size() && !(s_.skips[skip].from == from && s_.skips[skip].to == to)) ++skip;
    if (skip == s_.skips.size() || microbatch < 0 || microbatch >= s_.microbatches)
      throw Error(ErrorCode::kInvalidArgument, "replay of schedule '" + s_.name + "': a skip message of skip " +
                                                   std::to_string(from) + ">" + std::to_string(to) + " micro-batch " +
                                                   std::to_string(microbatch) + " that the schedule does not declare");
    return chain_size_ + (skip * 2 + (forward ? 0 : 1)) * static_cast<size_t>(s_.microbatches) + microbatch;
  }
  // A skip message's key: the producer's stage first, whichever end the action is.
  size_t skip_key_of(const Action& a) const {
    const bool at_producer = a.kind == ActionKind::SEND_SKIP || a.kind == ActionKind::RECV_SKIP_GRAD;
    const bool forward = a.kind == ActionKind::SEND_SKIP || a.kind == ActionKind::RECV_SKIP;
    return at_producer ? skip_key(a.stage, a.peer, forward, a.microbatch)
                       : skip_key(a.peer, a.stage, forward, a.microbatch);
  }
  size_t key(int sender_stage, bool forward, int microbatch) const {
    const size_t row = static_cast<size_t>(sender_stage) * 2 + (forward ? 0 : 1);
    return detail::blocked_index(row, 2 * static_cast<size_t>(s_.num_stages()), microbatch);
  }
  size_t key_of(const Action& a) const {  // a SEND or RECV
    if (is_skip_message(a.kind)) return skip_key_of(a);
    switch (a.kind) {
      case ActionKind::SEND_F: return key(a.stage, true, a.microbatch);
      case ActionKind::RECV_F: return key(a.stage - 1, true, a.microbatch);
      case ActionKind::SEND_B: return key(a.stage, false, a.microbatch);
      default: return key(a.stage + 1, false, a.microbatch);
    }
  }
  int peer_of(const Action& a) const {
    if (is_skip_message(a.kind)) return s_.rank_of(a.peer);
    const bool toward_next = a.kind == ActionKind::SEND_F || a.kind == ActionKind::RECV_B;
    return s_.rank_of(toward_next ? a.stage + 1 : a.stage - 1);
  }
  // The key of the message a compute action waits for, or kNoMessage when its input is produced on this rank.
  size_t input_of(int rank, const Action& a) const {
    if (a.kind == ActionKind::F && a.stage > 0 && s_.rank_of(a.stage - 1) != rank)
      return key(a.stage - 1, true, a.microbatch);
    if (detail::produces_input_gradient(a.kind) && a.stage < s_.num_stages() - 1 && s_.rank_of(a.stage + 1) != rank)
      return key(a.stage + 1, false, a.microbatch);
    return kNoMessage;
  }
  // When the skip messages `a` needs have arrived (0 when it needs none; < 0 while one has not): the reader's F
  // waits for its skips, the producer's backward for their gradients, from stages on other ranks.
  double skips_arrived(int rank, const Action& a, size_t& missing) const {
    double arrived = 0.0;
    const bool forward = a.kind == ActionKind::F;
    if (!forward && !detail::produces_input_gradient(a.kind)) return arrived;
    for (const SkipEdge& skip : s_.skips) {
      const int here = forward ? skip.to : skip.from, there = forward ? skip.from : skip.to;
      if (here != a.stage || s_.rank_of(there) == rank) continue;
      const size_t key = skip_key(skip.from, skip.to, forward, a.microbatch);
      if (messages_[key].complete < 0.0) {
        missing = key;
        return -1.0;
      }
      arrived = std::max(arrived, messages_[key].complete);
    }
    return arrived;
  }
  double cost_of(ActionKind kind) const {
    switch (kind) {
      case ActionKind::F: return costs_.forward;
      case ActionKind::I: return costs_.backward_input;
      case ActionKind::W: return costs_.backward_weight;
      default: return costs_.backward_input + costs_.backward_weight;  // B
    }
  }

  // Message `key` completed: whichever of its two ranks was stopped on it may move again.
  void wake(size_t key, int one_end, int other_end) {
    for (int rank : {one_end, other_end}) {
      if (waiting_on_[rank] != key) continue;
      waiting_on_[rank] = kNoMessage;
      ready_.push_back(rank);
    }
  }

  // The replay hops between hundreds of ranks' lists and their messages, more streams than the hardware prefetcher
  // follows, and each message's line is first touched cold: fetch both a few actions before they are needed.
  void prefetch_ahead(int rank, const std::vector<Action>& list, size_t i) const {
    constexpr size_t kActionsAhead = 32, kMessagesAhead = 8;
    if (i + kActionsAhead < list.size()) __builtin_prefetch(&list[i + kActionsAhead]);
    if (i + kMessagesAhead >= list.size()) return;
    const Action& a = list[i + kMessagesAhead];
    if (is_communication(a.kind)) __builtin_prefetch(&messages_[key_of(a)], 1);
    else if (const size_t input = input_of(rank, a); input != kNoMessage) __builtin_prefetch(&messages_[input]);
  }

  // Runs `rank` until it must wait, registering it with the message it waits for.
  void advance(int rank) {
    const std::vector<Action>& list = s_.actions[rank];
    for (size_t& i = cursor_[rank]; i < list.size(); ++i) {
      prefetch_ahead(rank, list, i);
      const Action& a = list[i];
      if (is_compute(a.kind)) {
        const size_t input = input_of(rank, a);
        double arrived = input == kNoMessage ? 0.0 : messages_[input].complete;
        if (arrived < 0.0) {
          waiting_on_[rank] = input;
          return;
        }
        if (!s_.skips.empty()) {
          size_t missing = kNoMessage;
          const double skips = skips_arrived(rank, a, missing);
          if (skips < 0.0) {
            waiting_on_[rank] = missing;
            return;
          }
          arrived = std::max(arrived, skips);
        }
        clock_[rank] = std::max(clock_[rank], arrived) + cost_of(a.kind);
      } else if (!post(rank, a)) {
        return;
      }
    }
  }

  // Posts a SEND/RECV at the rank's clock; false while a blocking post waits for its other end.
  bool post(int rank, const Action& a) {
    const size_t key = key_of(a);
    Message& m = messages_[key];
    const bool sending = a.kind == ActionKind::SEND_F || a.kind == ActionKind::SEND_B ||
                         a.kind == ActionKind::SEND_SKIP || a.kind == ActionKind::SEND_SKIP_GRAD;
    double& mine = sending ? m.send_post : m.recv_post;
    if (mine < 0.0) mine = clock_[rank];
    if (mode_ == TransferMode::kPostingOrder) return true;  // open from now on: oldest_open() finds it
    const double theirs = sending ? m.recv_post : m.send_post;
    if (theirs < 0.0) {
      waiting_on_[rank] = key;
      return false;
    }
    if (m.complete < 0.0) {
      m.complete = std::max(m.send_post, m.recv_post) + transfer_;
      wake(key, rank, peer_of(a));  // the other end is stopped at its post
    }
    clock_[rank] = std::max(clock_[rank], m.complete);
    return true;
  }

  // The rank's oldest posted, not yet completed SEND/RECV (posting order), or nullptr.
  const Action* oldest_open(int rank) {
    const std::vector<Action>& list = s_.actions[rank];
    size_t& i = oldest_[rank];
    while (i < cursor_[rank] && is_compute(list[i].kind)) ++i;
    return i < cursor_[rank] ? &list[i] : nullptr;
  }

  // Posting order: a message completes once it is the oldest open one on both of its ranks. Completing one can
  // make the next ones on both ranks complete too, hence the stack of ranks to look at.
  void settle(int first) {
    look_.assign(1, first);  // a member, so that this per-advance call does not allocate
    while (!look_.empty()) {
      const int rank = look_.back();
      look_.pop_back();
      while (const Action* oldest = oldest_open(rank)) {
        const Action& a = *oldest;
        const int peer = peer_of(a);
        const Action* theirs = oldest_open(peer);
        if (theirs == nullptr || key_of(*theirs) != key_of(a)) break;
        const size_t key = key_of(a);
        Message& m = messages_[key];
        // The transfer starts once both ends are posted; it completes no earlier than either rank's older ones.
        m.complete = std::max({std::max(m.send_post, m.recv_post) + transfer_, last_done_[rank], last_done_[peer]});
        last_done_[rank] = last_done_[peer] = m.complete;
        ++oldest_[rank];
        ++oldest_[peer];
        wake(key, rank, peer);
        look_.push_back(peer);
      }
    }
  }

  const Schedule& s_;
  const CostModel costs_;
  const TransferMode mode_;
  const double transfer_;
  const size_t chain_size_;
  std::vector<Message>& messages_;
  std::vector<size_t> cursor_;
  std::vector<size_t> waiting_on_;  // per rank: the message it is stopped on, or kNoMessage
  std::vector<double> clock_;      // when the rank's last compute (or blocking transfer) ends
  std::vector<double> last_done_;  // when the rank's last completed message completed
  // Posting order: a rank's open messages are the SEND/RECVs it has posted (before its cursor) and not completed,
  // which complete in list order, so the oldest one's position is all that needs keeping.
  std::vector<size_t> oldest_;
  std::vector<int> ready_;                       // ranks that may be able to move
  std::vector<int> look_;                        // settle(): ranks whose oldest open message may complete
};

}  // namespace

const char* transfer_mode_name(TransferMode mode) {
  switch (mode) {
    case TransferMode::kComputeOnly: return "compute_only";
    case TransferMode::kPostingOrder: return "posting_order";
    default: return "blocking";
  }
}

TransferMode parse_transfer_mode(const std::string& text) {
  for (TransferMode mode : {TransferMode::kComputeOnly, TransferMode::kPostingOrder, TransferMode::kBlocking})
    if (text == transfer_mode_name(mode)) return mode;
  throw Error(ErrorCode::kInvalidArgument,
              "unknown transfer mode '" + text + "' (expected compute_only, posting_order or blocking)");
}

double replay_makespan(const Schedule& lowered, const CostModel& costs, TransferMode mode) {
  return detail::ReplayWorkspace().makespan(lowered, costs, mode);
}

namespace detail {

struct ReplayWorkspace::Table {
  std::vector<Message> messages;
};

ReplayWorkspace::ReplayWorkspace() : table_(std::make_unique<Table>()) {}
ReplayWorkspace::~ReplayWorkspace() = default;

double ReplayWorkspace::makespan(const Schedule& lowered, const CostModel& costs, TransferMode mode) {
  check_cost_model(costs);
  if (!is_lowered(lowered) && lowered.ranks > 1)
    throw Error(ErrorCode::kInvalidArgument, "replay: schedule '" + lowered.name + "' has no SEND/RECV; lower() it");
  if (mode == TransferMode::kComputeOnly) return simulate(lowered, costs).makespan;
  return Replayer(lowered, costs, mode, table_->messages).run();
}

}  // namespace detail

}  // namespace schedule
}  // namespace sluice
