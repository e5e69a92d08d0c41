#include "kernels/cpu/onednn_conv.h"

#include <map>
#include <unordered_map>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/async_signals_held.h"
#include "kernels/cpu/onednn_one_thread.h"

namespace sluice::kernels {
namespace {

using dnnl::memory;
using Dims = memory::dims;

enum class Pass { kForward, kBackwardData, kBackwardWeights };

// Plain C-order layouts (a = outermost): the memory of the API's [samples][channels][extents] and of PyTorch's
// weights, read in place.
memory::format_tag plain(size_t ndims) {
  switch (ndims) {
    case 1: return memory::format_tag::a;
    case 3: return memory::format_tag::abc;
    case 4: return memory::format_tag::abcd;
    case 5: return memory::format_tag::abcde;
    case 6: return memory::format_tag::abcdef;
    default: break;
  }
  throw Error(ErrorCode::kInternal, "oneDNN conv: no plain layout of " + std::to_string(ndims) + " dimensions");
}

memory::desc describe(const Dims& dims) { return memory::desc(dims, memory::data_type::f32, plain(dims.size())); }

struct Descs {
  memory::desc src, weights, bias, dst;
  Dims strides, dilates, pad_low, pad_high;
};

Descs describe(const ConvGeometry& g, bool with_bias) {
  Dims src{1, g.in_channels}, dst{1, g.out_channels}, weights;
  if (g.groups > 1) weights = {g.groups, g.out_channels / g.groups, g.in_channels / g.groups};
  else weights = {g.out_channels, g.in_channels};
  Descs d;
  for (size_t i = 0; i < g.dims(); ++i) {
    src.push_back(g.in[i]);
    dst.push_back(g.out[i]);
    weights.push_back(g.kernel[i]);
    d.strides.push_back(g.stride[i]);
    d.dilates.push_back(g.dilation[i] - 1);  // oneDNN counts the gaps: 0 is a dense kernel
    d.pad_low.push_back(g.pad_low[i]);
    d.pad_high.push_back(g.pad_high[i]);
  }
  d.src = describe(src);
  d.dst = describe(dst);
  d.weights = describe(weights);
  if (with_bias) d.bias = describe(Dims{g.out_channels});
  return d;
}

// A built primitive: forward for every pass (the backward ones are built from its descriptor as their hint).
struct Entry {
  dnnl::primitive primitive;
  Descs descs;
};

using Key = std::pair<Pass, std::vector<int64_t>>;

std::vector<int64_t> key_of(const ConvGeometry& g, bool with_bias) {
  std::vector<int64_t> key{g.in_channels, g.out_channels, g.groups, with_bias ? 1 : 0};
  for (const auto* field : {&g.in, &g.kernel, &g.stride, &g.dilation, &g.pad_low, &g.pad_high}) {
    key.insert(key.end(), field->begin(), field->end());
  }
  return key;
}

// Per thread, so no locks; at most kMaxCachedShapes geometries (a rebuilt primitive gives the same bits).
constexpr size_t kMaxCachedShapes = 64;

struct Context {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<Key, Entry> entries;
};

Context& context() {
  static thread_local Context instance;
  return instance;
}

dnnl::convolution_forward::primitive_desc forward_pd(const Descs& d, const dnnl::engine& engine) {
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                             d.src, d.weights, d.bias, d.dst, d.strides, d.dilates, d.pad_low,
                                             d.pad_high);
  return dnnl::convolution_forward::primitive_desc(desc, engine);
}

dnnl::primitive build(Pass pass, const Descs& d, const dnnl::engine& engine) {
  const auto hint = forward_pd(d, engine);
  switch (pass) {
    case Pass::kForward: return dnnl::convolution_forward(hint);
    case Pass::kBackwardData: {
      const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, d.src, d.weights, d.dst,
                                                       d.strides, d.dilates, d.pad_low, d.pad_high);
      return dnnl::convolution_backward_data(dnnl::convolution_backward_data::primitive_desc(desc, engine, hint));
    }
    case Pass::kBackwardWeights: {
      const dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, d.src, d.weights,
                                                          d.bias, d.dst, d.strides, d.dilates, d.pad_low,
                                                          d.pad_high);
      return dnnl::convolution_backward_weights(
          dnnl::convolution_backward_weights::primitive_desc(desc, engine, hint));
    }
  }
  throw Error(ErrorCode::kInternal, "oneDNN conv: unknown pass");
}

const char* pass_name(Pass pass) {
  switch (pass) {
    case Pass::kForward: return "forward";
    case Pass::kBackwardData: return "backward-data";
    case Pass::kBackwardWeights: return "backward-weights";
  }
  return "?";
}

// Builds (first use) and runs one pass on this thread, oneDNN held at one thread and asynchronous signals held back
// (its gemm-based kernels may run with the stack pointer in the heap: async_signals_held.h).
void run(Pass pass, const ConvGeometry& g, bool with_bias, const std::vector<std::pair<int, void*>>& arguments) {
  if (!onednn_runtime_is_openmp()) {
    throw Error(ErrorCode::kUnsupported, "conv: this oneDNN does not run on OpenMP, so its thread count cannot be "
                                         "held at one and the bits would depend on it");
  }
  const OmpThreadsScope one_thread(1);
  try {
    Context& c = context();
    const Key key{pass, key_of(g, with_bias)};
    auto found = c.entries.find(key);
    if (found == c.entries.end()) {
      if (c.entries.size() >= kMaxCachedShapes) c.entries.clear();
      Entry entry;
      entry.descs = describe(g, with_bias);
      entry.primitive = build(pass, entry.descs, c.engine);
      found = c.entries.emplace(key, std::move(entry)).first;
    }
    const Descs& d = found->second.descs;
    std::unordered_map<int, memory> args;
    for (const auto& [argument, pointer] : arguments) {
      const memory::desc& md = argument == DNNL_ARG_SRC || argument == DNNL_ARG_DIFF_SRC       ? d.src
                               : argument == DNNL_ARG_DST || argument == DNNL_ARG_DIFF_DST     ? d.dst
                               : argument == DNNL_ARG_BIAS || argument == DNNL_ARG_DIFF_BIAS   ? d.bias
                                                                                               : d.weights;
      args.emplace(argument, memory(md, c.engine, pointer));
    }
    const AsyncSignalsHeld held;
    found->second.primitive.execute(c.stream, args);
    c.stream.wait();
  } catch (const dnnl::error& e) {
    throw Error(e.status == dnnl_unimplemented ? ErrorCode::kUnsupported : ErrorCode::kInternal,
                std::string("conv ") + pass_name(pass) + ": oneDNN could not " +
                    (e.status == dnnl_unimplemented ? "find an implementation for " : "build or run ") +
                    g.describe() + ": " + e.what());
  }
}

}  // namespace

void onednn_conv_forward(const ConvGeometry& g, const float* x, const float* weight, const float* bias, float* y) {
  std::vector<std::pair<int, void*>> args = {{DNNL_ARG_SRC, const_cast<float*>(x)},
                                             {DNNL_ARG_WEIGHTS, const_cast<float*>(weight)},
                                             {DNNL_ARG_DST, y}};
  if (bias != nullptr) args.emplace_back(DNNL_ARG_BIAS, const_cast<float*>(bias));
  run(Pass::kForward, g, bias != nullptr, args);
}

void onednn_conv_backward_data(const ConvGeometry& g, const float* dy, const float* weight, float* dx) {
  run(Pass::kBackwardData, g, false,
      {{DNNL_ARG_DIFF_DST, const_cast<float*>(dy)}, {DNNL_ARG_WEIGHTS, const_cast<float*>(weight)},
       {DNNL_ARG_DIFF_SRC, dx}});
}

void onednn_conv_backward_weights(const ConvGeometry& g, const float* x, const float* dy, float* weight_grad,
                                  float* bias_grad) {
  std::vector<std::pair<int, void*>> args = {{DNNL_ARG_SRC, const_cast<float*>(x)},
                                             {DNNL_ARG_DIFF_DST, const_cast<float*>(dy)},
                                             {DNNL_ARG_DIFF_WEIGHTS, weight_grad}};
  if (bias_grad != nullptr) args.emplace_back(DNNL_ARG_DIFF_BIAS, bias_grad);
  run(Pass::kBackwardWeights, g, bias_grad != nullptr, args);
}

}  // namespace sluice::kernels
