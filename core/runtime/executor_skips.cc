// The executor's routed skips (executor.h, core/model/skip_routes.h): the skip messages' actions and the column
// work around F and the input gradient.
#include <string>
#include <utility>

#include "core/common/error.h"
#include "core/runtime/executor.h"
#include "core/runtime/microbatch_rows.h"
#include "core/runtime/skip_columns.h"

namespace sluice::runtime {

using schedule::Action;
using schedule::ActionKind;

void Executor::check_routes() const {
  bool same = routes_.routes.size() == schedule_.skips.size();
  for (size_t i = 0; same && i < routes_.routes.size(); ++i)
    same = routes_.routes[i].from == schedule_.skips[i].from && routes_.routes[i].to == schedule_.skips[i].to;
  if (!same)
    throw Error(ErrorCode::kInternal, "rank " + std::to_string(rank_) +
                                          ": the schedule's skips are not the model's skip routes (lower the "
                                          "schedule with the routes' stage pairs)");
}

int Executor::route_index(int from, int to) const {
  for (size_t i = 0; i < routes_.routes.size(); ++i)
    if (routes_.routes[i].from == from && routes_.routes[i].to == to) return static_cast<int>(i);
  throw Error(ErrorCode::kInternal, "no skip route from stage " + std::to_string(from) + " to stage " +
                                        std::to_string(to));
}

namespace {

const std::vector<model::RoutedColumns>& at_boundary(const std::vector<std::vector<model::RoutedColumns>>& columns,
                                                     int boundary) {
  static const std::vector<model::RoutedColumns> kNone;
  if (boundary < 0 || boundary >= static_cast<int>(columns.size())) return kNone;
  return columns[boundary];
}

}  // namespace

const std::vector<model::RoutedColumns>& Executor::sent(int boundary) const {
  return at_boundary(routes_.sent, boundary);
}

const std::vector<model::RoutedColumns>& Executor::received(int boundary) const {
  return at_boundary(routes_.received, boundary);
}

// RECV_SKIP at the reader's stage (from its producer, the action's peer); RECV_SKIP_GRAD at the producer's.
void Executor::post_skip_receive(const Action& a) {
  const bool forward = a.kind == ActionKind::RECV_SKIP;
  const int route = forward ? route_index(a.peer, a.stage) : route_index(a.stage, a.peer);
  auto& pending = forward ? recv_skip_ : recv_skip_grad_;
  const RouteKey key{route, a.microbatch};
  if (pending.count(key)) return;  // already posted by the look-ahead
  Pending p;
  p.buffer = backend_.empty(rows_of(a.microbatch).count, routes_.routes[route].features);
  p.request = transport_.irecv(p.buffer.data(), p.buffer.size(), schedule_.stage_to_rank.at(a.peer),
                               skip_tag(route, a.microbatch, forward));
  pending.emplace(key, std::move(p));
}

void Executor::exec_send_skip(const Action& a) {
  const bool forward = a.kind == ActionKind::SEND_SKIP;
  const int route = forward ? route_index(a.stage, a.peer) : route_index(a.peer, a.stage);
  auto& outbox = forward ? skip_out_ : skip_grad_out_;
  auto it = outbox.find(RouteKey{route, a.microbatch});
  if (it == outbox.end())
    throw Error(ErrorCode::kInternal, schedule::to_string(a) + " before the compute that makes what it sends");
  Pending p;
  p.buffer = std::move(it->second);
  outbox.erase(it);
  p.request = transport_.isend(p.buffer.data(), p.buffer.size(), schedule_.stage_to_rank.at(a.peer),
                               skip_tag(route, a.microbatch, forward));
  sends_.push_back(std::move(p));
}

// What a route brought for micro-batch `mb`: handed over when both of its stages live here, else received.
kernels::Tensor Executor::take_skip(int route, int mb, bool forward, StepCounters& counters) {
  const model::SkipRoute& r = routes_.routes[route];
  const int peer_stage = forward ? r.from : r.to;
  const RouteKey key{route, mb};
  if (schedule_.stage_to_rank.at(peer_stage) == rank_) {
    auto& local = forward ? skip_out_ : skip_grad_out_;
    auto it = local.find(key);
    if (it == local.end()) throw Error(ErrorCode::kInternal, "a skip tensor used before it was made");
    kernels::Tensor t = std::move(it->second);
    local.erase(it);
    return t;
  }
  auto& pending = forward ? recv_skip_ : recv_skip_grad_;
  auto it = pending.find(key);
  if (it == pending.end())
    throw Error(ErrorCode::kInternal, "rank " + std::to_string(rank_) + ": no skip message from stage " +
                                          std::to_string(peer_stage) + " for micro-batch " + std::to_string(mb) +
                                          " (the schedule lacks its receive)");
  kernels::Tensor t = wait_for(it->second,
                               std::string(forward ? "skip tensor" : "skip gradient") + " from stage " +
                                   std::to_string(peer_stage) + " micro-batch " + std::to_string(mb),
                               counters);
  pending.erase(it);
  return t;
}

void Executor::produce_skips(int stage, int mb, const kernels::Tensor& output) {
  for (size_t route = 0; route < routes_.routes.size(); ++route) {
    const model::SkipRoute& r = routes_.routes[route];
    if (r.from != stage) continue;
    skip_out_[RouteKey{static_cast<int>(route), mb}] =
        gather_route(backend_, output, sent(stage), static_cast<int>(route), r.features);
  }
}

void Executor::fill_skips(int stage, int mb, kernels::Tensor& input, StepCounters& counters) {
  for (size_t route = 0; route < routes_.routes.size(); ++route) {
    if (routes_.routes[route].to != stage) continue;
    const kernels::Tensor skip = take_skip(static_cast<int>(route), mb, true, counters);
    scatter_route(backend_, skip, received(stage - 1), static_cast<int>(route), input);
  }
}

void Executor::fill_skip_gradients(int stage, int mb, kernels::Tensor& grad_output, StepCounters& counters) {
  for (size_t route = 0; route < routes_.routes.size(); ++route) {
    if (routes_.routes[route].from != stage) continue;
    const kernels::Tensor grad = take_skip(static_cast<int>(route), mb, false, counters);
    scatter_route(backend_, grad, sent(stage), static_cast<int>(route), grad_output);
  }
}

void Executor::produce_skip_gradients(int stage, int mb, const kernels::Tensor& grad_input) {
  for (size_t route = 0; route < routes_.routes.size(); ++route) {
    const model::SkipRoute& r = routes_.routes[route];
    if (r.to != stage) continue;
    skip_grad_out_[RouteKey{static_cast<int>(route), mb}] =
        gather_route(backend_, grad_input, received(stage - 1), static_cast<int>(route), r.features);
  }
}

}  // namespace sluice::runtime
