#include "kernels/cpu/onednn_sampling.h"

#include <functional>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/async_signals_held.h"
#include "kernels/cpu/onednn_one_thread.h"

namespace sluice::kernels {
namespace {

using dnnl::memory;
using Dims = memory::dims;

// Plain C-order layouts: the memory of the API's [channels][extents] (one sample) and of PyTorch's weights.
memory::format_tag plain(size_t ndims) {
  switch (ndims) {
    case 1: return memory::format_tag::a;
    case 3: return memory::format_tag::abc;
    case 4: return memory::format_tag::abcd;
    case 5: return memory::format_tag::abcde;
    default: break;
  }
  throw Error(ErrorCode::kInternal, "oneDNN: no plain layout of " + std::to_string(ndims) + " dimensions");
}

memory::desc describe(const Dims& dims) { return memory::desc(dims, memory::data_type::f32, plain(dims.size())); }

// One sample's field: {1, channels, extents..}.
memory::desc field(int64_t channels, const std::vector<int64_t>& extents) {
  Dims dims{1, channels};
  dims.insert(dims.end(), extents.begin(), extents.end());
  return describe(dims);
}

// A built pass: its primitive, and the memory description of each argument it takes.
struct Entry {
  dnnl::primitive primitive;
  std::unordered_map<int, memory::desc> descs;
};

enum class Op { kPoolForward, kPoolBackward, kResampleForward, kResampleBackward, kDeconvForward,
                kDeconvBackwardData, kDeconvBackwardWeights };

using Key = std::pair<Op, std::vector<int64_t>>;

// Per thread, so no locks; at most kMaxCached passes (a rebuilt primitive gives the same bits).
constexpr size_t kMaxCached = 64;

struct Context {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<Key, Entry> entries;
  std::vector<float> scratch_dst;          // max pooling's recomputed forward output
  std::vector<unsigned char> workspace;    // and the places of its maxima
};

Context& context() {
  static thread_local Context instance;
  return instance;
}

[[noreturn]] void rethrow(const dnnl::error& e, const std::string& what) {
  const bool unimplemented = e.status == dnnl_unimplemented;
  throw Error(unimplemented ? ErrorCode::kUnsupported : ErrorCode::kInternal,
              what + ": oneDNN could not " + (unimplemented ? "find an implementation" : "build or run it") + ": " +
                  e.what());
}

// The entry for (op, key), built by `build` on first use on this thread.
const Entry& cached(Op op, const std::vector<int64_t>& key, const std::function<Entry(const dnnl::engine&)>& build) {
  Context& c = context();
  const Key full{op, key};
  auto found = c.entries.find(full);
  if (found == c.entries.end()) {
    if (c.entries.size() >= kMaxCached) c.entries.clear();
    found = c.entries.emplace(full, build(c.engine)).first;
  }
  return found->second;
}

// Runs one built pass on this thread, oneDNN held at one thread and asynchronous signals held back.
void execute(const Entry& entry, const std::vector<std::pair<int, const void*>>& arguments) {
  Context& c = context();
  std::unordered_map<int, memory> args;
  for (const auto& [argument, pointer] : arguments) {
    args.emplace(argument, memory(entry.descs.at(argument), c.engine, const_cast<void*>(pointer)));
  }
  // Max pooling's workspace (the places of the maxima) lives on this thread from a forward to the backward after it.
  const auto workspace = entry.descs.find(DNNL_ARG_WORKSPACE);
  if (workspace != entry.descs.end()) {
    c.workspace.resize(workspace->second.get_size());
    args.emplace(DNNL_ARG_WORKSPACE, memory(workspace->second, c.engine, c.workspace.data()));
  }
  const AsyncSignalsHeld held;
  entry.primitive.execute(c.stream, args);
  c.stream.wait();
}

// Builds (first use) and runs `op`, with oneDNN's errors named after `what`.
void run(Op op, const std::vector<int64_t>& key, const std::function<Entry(const dnnl::engine&)>& build,
         const std::vector<std::pair<int, const void*>>& arguments, const std::string& what) {
  if (!onednn_runtime_is_openmp()) {
    throw Error(ErrorCode::kUnsupported, what + ": this oneDNN does not run on OpenMP, so its thread count cannot "
                                                "be held at one and the bits would depend on it");
  }
  const OmpThreadsScope one_thread(1);
  try {
    execute(cached(op, key, build), arguments);
  } catch (const dnnl::error& e) {
    rethrow(e, what);
  }
}

// ---- pooling ----

std::vector<int64_t> key_of(const PoolGeometry& g) {
  std::vector<int64_t> key{static_cast<int64_t>(g.mode), g.channels};
  key.insert(key.end(), g.in.begin(), g.in.end());
  key.insert(key.end(), g.kernel.begin(), g.kernel.end());
  return key;
}

dnnl::algorithm algorithm_of(const PoolGeometry& g) {
  return g.mode == PoolMode::kMax ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
}

dnnl::pooling_forward::primitive_desc pool_pd(const PoolGeometry& g, const dnnl::engine& engine) {
  const Dims zeros(g.in.size(), 0);
  const dnnl::algorithm algorithm = algorithm_of(g);
  const dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_training, algorithm, field(g.channels, g.in),
                                         field(g.channels, g.out()), Dims(g.kernel), Dims(g.kernel), zeros, zeros);
  return dnnl::pooling_forward::primitive_desc(desc, engine);
}

Entry pool_forward_entry(const PoolGeometry& g, const dnnl::engine& engine) {
  const auto pd = pool_pd(g, engine);
  Entry entry{dnnl::pooling_forward(pd), {{DNNL_ARG_SRC, pd.src_desc()}, {DNNL_ARG_DST, pd.dst_desc()}}};
  if (g.mode == PoolMode::kMax) entry.descs.emplace(DNNL_ARG_WORKSPACE, pd.workspace_desc());
  return entry;
}

Entry pool_backward_entry(const PoolGeometry& g, const dnnl::engine& engine) {
  const auto hint = pool_pd(g, engine);
  const Dims zeros(g.in.size(), 0);
  const dnnl::pooling_backward::desc desc(algorithm_of(g), field(g.channels, g.in), field(g.channels, g.out()),
                                          Dims(g.kernel), Dims(g.kernel), zeros, zeros);
  const dnnl::pooling_backward::primitive_desc pd(desc, engine, hint);
  Entry entry{dnnl::pooling_backward(pd),
              {{DNNL_ARG_DIFF_SRC, pd.diff_src_desc()}, {DNNL_ARG_DIFF_DST, pd.diff_dst_desc()}}};
  if (g.mode == PoolMode::kMax) entry.descs.emplace(DNNL_ARG_WORKSPACE, pd.workspace_desc());
  return entry;
}

// ---- resampling ----

std::vector<int64_t> key_of(const ResampleGeometry& g) {
  std::vector<int64_t> key{static_cast<int64_t>(g.mode), g.channels};
  key.insert(key.end(), g.in.begin(), g.in.end());
  key.insert(key.end(), g.factor.begin(), g.factor.end());
  return key;
}

dnnl::algorithm algorithm_of(const ResampleGeometry& g) {
  return g.mode == ResampleMode::kNearest ? dnnl::algorithm::resampling_nearest : dnnl::algorithm::resampling_linear;
}

// Factors are given as the output extents (out = in · factor exactly), so no rounding of a float factor enters.
dnnl::resampling_forward::primitive_desc resample_pd(const ResampleGeometry& g, const dnnl::engine& engine) {
  const dnnl::resampling_forward::desc desc(dnnl::prop_kind::forward_training, algorithm_of(g),
                                            field(g.channels, g.in), field(g.channels, g.out()));
  return dnnl::resampling_forward::primitive_desc(desc, engine);
}

Entry resample_forward_entry(const ResampleGeometry& g, const dnnl::engine& engine) {
  const auto pd = resample_pd(g, engine);
  return {dnnl::resampling_forward(pd), {{DNNL_ARG_SRC, pd.src_desc()}, {DNNL_ARG_DST, pd.dst_desc()}}};
}

Entry resample_backward_entry(const ResampleGeometry& g, const dnnl::engine& engine) {
  const auto hint = resample_pd(g, engine);
  const dnnl::resampling_backward::desc desc(algorithm_of(g), field(g.channels, g.in), field(g.channels, g.out()));
  const dnnl::resampling_backward::primitive_desc pd(desc, engine, hint);
  return {dnnl::resampling_backward(pd),
          {{DNNL_ARG_DIFF_SRC, pd.diff_src_desc()}, {DNNL_ARG_DIFF_DST, pd.diff_dst_desc()}}};
}

// ---- transposed convolution ----

std::vector<int64_t> key_of(const DeconvGeometry& g, bool with_bias) {
  std::vector<int64_t> key{g.in_channels, g.out_channels, with_bias ? 1 : 0};
  for (const auto* values : {&g.in, &g.kernel, &g.stride}) key.insert(key.end(), values->begin(), values->end());
  return key;
}

// oneDNN's deconvolution weights are {out, in, k..}; PyTorch's memory is [in][out][k..]: the same dims with the
// first two swapped in memory (format tag bac, bacd, bacde).
struct DeconvDescs {
  memory::desc src, weights, bias, dst;
  Dims strides, pads;
};

DeconvDescs deconv_descs(const DeconvGeometry& g, bool with_bias) {
  Dims weights{g.out_channels, g.in_channels};
  weights.insert(weights.end(), g.kernel.begin(), g.kernel.end());
  static const memory::format_tag kSwapped[] = {memory::format_tag::bac, memory::format_tag::bacd,
                                                memory::format_tag::bacde};
  DeconvDescs d;
  d.src = field(g.in_channels, g.in);
  d.dst = field(g.out_channels, g.out());
  d.weights = memory::desc(weights, memory::data_type::f32, kSwapped[g.in.size() - 1]);
  if (with_bias) d.bias = describe(Dims{g.out_channels});
  d.strides.assign(g.stride.begin(), g.stride.end());
  d.pads.assign(g.in.size(), 0);
  return d;
}

dnnl::deconvolution_forward::primitive_desc deconv_pd(const DeconvDescs& d, const dnnl::engine& engine) {
  const dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_training,
                                               dnnl::algorithm::deconvolution_direct, d.src, d.weights, d.bias, d.dst,
                                               d.strides, d.pads, d.pads);
  return dnnl::deconvolution_forward::primitive_desc(desc, engine);
}

Entry deconv_entry(Op op, const DeconvGeometry& g, bool with_bias, const dnnl::engine& engine) {
  const DeconvDescs d = deconv_descs(g, with_bias);
  const auto hint = deconv_pd(d, engine);
  std::unordered_map<int, memory::desc> descs;
  if (op == Op::kDeconvForward) {
    descs = {{DNNL_ARG_SRC, d.src}, {DNNL_ARG_WEIGHTS, d.weights}, {DNNL_ARG_BIAS, d.bias}, {DNNL_ARG_DST, d.dst}};
    return {dnnl::deconvolution_forward(hint), descs};
  }
  if (op == Op::kDeconvBackwardData) {
    const dnnl::deconvolution_backward_data::desc desc(dnnl::algorithm::deconvolution_direct, d.src, d.weights, d.dst,
                                                       d.strides, d.pads, d.pads);
    descs = {{DNNL_ARG_DIFF_SRC, d.src}, {DNNL_ARG_WEIGHTS, d.weights}, {DNNL_ARG_DIFF_DST, d.dst}};
    return {dnnl::deconvolution_backward_data(dnnl::deconvolution_backward_data::primitive_desc(desc, engine, hint)),
            descs};
  }
  const dnnl::deconvolution_backward_weights::desc desc(dnnl::algorithm::deconvolution_direct, d.src, d.weights,
                                                        d.bias, d.dst, d.strides, d.pads, d.pads);
  descs = {{DNNL_ARG_SRC, d.src}, {DNNL_ARG_DIFF_WEIGHTS, d.weights}, {DNNL_ARG_DIFF_BIAS, d.bias},
           {DNNL_ARG_DIFF_DST, d.dst}};
  return {dnnl::deconvolution_backward_weights(
              dnnl::deconvolution_backward_weights::primitive_desc(desc, engine, hint)),
          descs};
}

void run_deconv(Op op, const DeconvGeometry& g, bool with_bias, const std::vector<std::pair<int, const void*>>& args) {
  run(op, key_of(g, with_bias), [&](const dnnl::engine& e) { return deconv_entry(op, g, with_bias, e); }, args,
      g.describe());
}

}  // namespace

void onednn_pool_forward(const PoolGeometry& g, const float* x, float* y) {
  run(Op::kPoolForward, key_of(g), [&](const dnnl::engine& e) { return pool_forward_entry(g, e); },
      {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}}, g.describe());
}

// Max pooling: the forward again, into scratch, leaves this thread's workspace for the backward.
void onednn_pool_backward(const PoolGeometry& g, const float* x, const float* dy, float* dx) {
  if (g.mode == PoolMode::kMax) {
    std::vector<float>& scratch = context().scratch_dst;
    scratch.resize(static_cast<size_t>(g.out_features()));
    onednn_pool_forward(g, x, scratch.data());
  }
  run(Op::kPoolBackward, key_of(g), [&](const dnnl::engine& e) { return pool_backward_entry(g, e); },
      {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_SRC, dx}}, g.describe() + " backward");
}

void onednn_resample_forward(const ResampleGeometry& g, const float* x, float* y) {
  run(Op::kResampleForward, key_of(g), [&](const dnnl::engine& e) { return resample_forward_entry(g, e); },
      {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}}, g.describe());
}

void onednn_resample_backward(const ResampleGeometry& g, const float* dy, float* dx) {
  run(Op::kResampleBackward, key_of(g), [&](const dnnl::engine& e) { return resample_backward_entry(g, e); },
      {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_SRC, dx}}, g.describe() + " backward");
}

void onednn_deconv_forward(const DeconvGeometry& g, const float* x, const float* weight, const float* bias,
                           float* y) {
  std::vector<std::pair<int, const void*>> args = {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, weight}, {DNNL_ARG_DST, y}};
  if (bias != nullptr) args.emplace_back(DNNL_ARG_BIAS, bias);
  run_deconv(Op::kDeconvForward, g, bias != nullptr, args);
}

void onednn_deconv_backward_data(const DeconvGeometry& g, const float* dy, const float* weight, float* dx) {
  run_deconv(Op::kDeconvBackwardData, g, false,
             {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WEIGHTS, weight}, {DNNL_ARG_DIFF_SRC, dx}});
}

void onednn_deconv_backward_weights(const DeconvGeometry& g, const float* x, const float* dy, float* weight_grad,
                                    float* bias_grad) {
  std::vector<std::pair<int, const void*>> args = {
      {DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_WEIGHTS, weight_grad}};
  if (bias_grad != nullptr) args.emplace_back(DNNL_ARG_DIFF_BIAS, bias_grad);
  run_deconv(Op::kDeconvBackwardWeights, g, bias_grad != nullptr, args);
}

}  // namespace sluice::kernels
