#include "kernels/cpu/onednn_softmax.h"

#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <utility>

#include "core/common/error.h"
#include "kernels/cpu/async_signals_held.h"
#include "kernels/cpu/onednn_one_thread.h"

namespace sluice::kernels {
namespace {

using dnnl::memory;

// The forward and backward primitives of one [rows][cols] shape (softmax over the last axis).
struct Pair {
  memory::desc desc;
  dnnl::softmax_forward forward;
  dnnl::softmax_backward backward;
};

// Per thread, so no locks; at most kMaxCached shapes (a rebuilt primitive gives the same bits).
constexpr size_t kMaxCached = 16;

struct Context {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<std::pair<int64_t, int64_t>, Pair> pairs;
};

Context& context() {
  static thread_local Context instance;
  return instance;
}

Pair build(const dnnl::engine& engine, int64_t rows, int64_t cols) {
  const memory::desc desc({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
  const dnnl::softmax_forward::primitive_desc forward(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_training, desc, 1), engine);
  const dnnl::softmax_backward::primitive_desc backward(dnnl::softmax_backward::desc(desc, desc, 1), engine, forward);
  return {desc, dnnl::softmax_forward(forward), dnnl::softmax_backward(backward)};
}

std::string shape_text(int64_t rows, int64_t cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

// Runs `body(context, pair)` for the shape on this thread, oneDNN held at one thread, its errors named.
template <typename Body>
void run(int64_t rows, int64_t cols, const char* what, Body&& body) {
  if (!onednn_runtime_is_openmp()) {
    throw Error(ErrorCode::kUnsupported, std::string(what) + ": this oneDNN does not run on OpenMP, so its thread "
                                                             "count cannot be held at one and the bits would depend on it");
  }
  const OmpThreadsScope one_thread(1);
  try {
    Context& c = context();
    auto found = c.pairs.find({rows, cols});
    if (found == c.pairs.end()) {
      if (c.pairs.size() >= kMaxCached) c.pairs.clear();
      found = c.pairs.emplace(std::make_pair(rows, cols), build(c.engine, rows, cols)).first;
    }
    const AsyncSignalsHeld held;  // as for every oneDNN kernel (async_signals_held.h)
    body(c, found->second);
    c.stream.wait();
  } catch (const dnnl::error& e) {
    const bool unimplemented = e.status == dnnl_unimplemented;
    throw Error(unimplemented ? ErrorCode::kUnsupported : ErrorCode::kInternal,
                std::string(what) + " of " + shape_text(rows, cols) + ": oneDNN could not " +
                    (unimplemented ? "find an implementation" : "build or run it") + ": " + e.what());
  }
}

memory wrap(const Pair& pair, const Context& c, const float* data) {
  return memory(pair.desc, c.engine, const_cast<float*>(data));
}

}  // namespace

void softmax_rows(int64_t rows, int64_t cols, float* s) {
  run(rows, cols, "attention softmax", [&](Context& c, const Pair& pair) {
    const memory data = wrap(pair, c, s);
    pair.forward.execute(c.stream, {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}});
  });
}

void softmax_rows_backward(int64_t rows, int64_t cols, const float* p, const float* dp, float* ds) {
  run(rows, cols, "attention softmax backward", [&](Context& c, const Pair& pair) {
    pair.backward.execute(c.stream, {{DNNL_ARG_DST, wrap(pair, c, p)},
                                     {DNNL_ARG_DIFF_DST, wrap(pair, c, dp)},
                                     {DNNL_ARG_DIFF_SRC, wrap(pair, c, ds)}});
  });
}

}  // namespace sluice::kernels
