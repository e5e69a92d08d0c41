// The interface every layer implements, in a form the pipeline executor can drive piecewise: forward (F),
// backward for the input (I), backward for the weights (W), or I and W fused (B).
// A layer holds only its parameters. Whatever one micro-batch's backward needs lives in a `LayerSaved` the
// CALLER owns, so any number of micro-batches can be in flight, and W can run long after I.
// Gradients ACCUMULATE (grad += contribution), in the same order whether W is split off or fused, so split and
// fused backward give bit-identical gradients.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/tensor.h"

namespace sluice::model {

// What a forward needs to know besides its input; the same context on a recompute gives the same result.
struct ForwardContext {
  uint64_t seed = 0;
  uint64_t step = 0;     // optimizer step
  int microbatch = 0;
  int layer_index = 0;   // global index in the whole model, not in the stage
  bool training = true;  // false: dropout is the identity
  // Global sample index of the micro-batch's row 0: its position in the stream of samples since step 0 (see
  // runtime::StepData::first_sample). Dropout keys its mask by it, so row r's mask belongs to sample
  // first_sample + r whatever micro-batch, replica or stage carries it.
  uint64_t first_sample = 0;
};

struct Parameter {
  std::string name;      // inside its layer: "weight", "fc1.bias"
  int layer_index = -1;  // global index of the owning layer
  kernels::Tensor value;
  kernels::Tensor grad;  // same shape as value; accumulated by backward, cleared by zero_grad
  // PyTorch's shape of the parameter, as checkpoints (format_version 3) store it: e.g. a conv weight
  // [out, in/groups, k..] held as the 2-D value [out][in/groups·Πk], a bias [out] held as [1][out]. Set by the
  // layer; empty means the value's own [rows, cols]. Its element count is always value's.
  std::vector<int64_t> shape;

  // Unique in the whole model, e.g. "layers.3.weight"; names checkpoints and optimizer state.
  std::string qualified_name() const;
  // `shape`, or {rows, cols} when the layer set none.
  std::vector<int64_t> stored_shape() const;
};

// One micro-batch's state of one layer between its forward and its backward.
struct LayerSaved {
  ForwardContext context;                           // layers whose backward needs the context copy it here
  std::vector<kernels::Tensor> tensors;             // written by forward, read by backward_input/backward_weight
  std::vector<kernels::Tensor> weight_grad_inputs;  // written by backward_input, read by backward_weight
  // A layer on a block of a domain-split field (core/model/field_domain.h): its input as its forward's halo fill
  // left it (padded by the neighbours' points: what the messages brought). A conv keeps it here for its parameter
  // gradients; other halo layers leave it here only when `keep_halos` asks. A forward that finds it here already
  // (handed back for a recompute under pipeline.recompute_halos: stash) uses it instead and sends no message.
  kernels::Tensor halo_input;
  // Set by the caller before the forward: it will keep halo_input for the recompute of this forward.
  bool keep_halos = false;

  size_t bytes() const;
  // halo_input, moved out (empty when there is none: the forward fills the halo itself).
  kernels::Tensor take_halo_input();
};

class Layer {
 public:
  virtual ~Layer() = default;

  virtual std::string type() const = 0;
  virtual int64_t in_features() const = 0;
  virtual int64_t out_features() const = 0;
  // Rough forward + backward FLOPs for one sample; only used to balance the partition.
  virtual double flops_per_sample() const = 0;
  // Bytes one sample keeps from this layer's forward to its backward, when the layer declares them (a custom layer's
  // sluice_layer_ops::activation_bytes, a transformer's); 0: not declared (estimates count the layer's input,
  // 4 x in_features).
  virtual double stash_bytes_per_sample() const { return 0.0; }
  // Which memory an application layer's callbacks take their arrays in (sluice_layer_ops::device): Sluice's own
  // layers compute on their stage's device through its backend; a custom layer is bound to host or device memory,
  // and the trainer refuses it on a stage of the other kind (core/runtime/custom_layer_devices.h).
  enum class Arrays { kStageDevice, kHost, kDevice };
  virtual Arrays arrays() const { return Arrays::kStageDevice; }

  virtual std::vector<Parameter*> parameters() { return {}; }
  // Sets initial parameter values from (seed, global_index(), parameter), never from the partition.
  virtual void init(uint64_t seed) { (void)seed; }

  // F. The input comes by value: a caller done with it moves it in, so a layer that keeps its input for backward
  // (most do) keeps it without a copy; on a GPU a copy is a full pass over the activation's memory.
  virtual kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) = 0;
  // I: returns dL/dx; may leave in saved.weight_grad_inputs what backward_weight will need.
  virtual kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) = 0;
  // W: parameter grads += contribution. `dy` is the same tensor backward_input got.
  virtual void backward_weight(const kernels::Tensor& dy, LayerSaved& saved) {
    (void)dy;
    (void)saved;
  }
  // B: I then W. An override must accumulate the gradients exactly as backward_weight does.
  virtual kernels::Tensor backward(const kernels::Tensor& dy, LayerSaved& saved);

  // I and B for a caller that has no use for dL/dx (the model's first layer: nothing lies before it). A layer
  // may then skip computing dL/dx, but must leave `saved` ready for backward_weight (I) and accumulate the
  // parameter gradients (B) exactly as backward_input and backward would: the gradients do not depend on which
  // of the four was called. The defaults run backward_input / backward and drop dL/dx, which is right for every
  // layer; a layer overrides them only where dL/dx costs real work that W does not reuse (a linear layer's
  // dx = dy W is a full GEMM that its W never reads).
  virtual void backward_input_without_dx(const kernels::Tensor& dy, LayerSaved& saved);
  virtual void backward_without_dx(const kernels::Tensor& dy, LayerSaved& saved);

  // A layer built on a domain-split field (core/model/field_domain.h) with parameters adds its step's per-tile
  // gradient partials to its parameters' grads here: a collective over the domain group (every rank of it calls
  // it for every such layer, in the same order), once per optimizer step, after the step's last backward and before
  // the gradient sum over replicas. A no-op for every other layer.
  virtual void finish_domain_step() {}

  // F of this layer and of `next` (the layer after it in the stage) as one, for layers that can fold the next
  // one's element-wise work into their own kernels: a linear layer and the activation after it add the bias and
  // activate in one pass over memory. Returns false, having done nothing, when it cannot fuse with `next`.
  // Otherwise it may move from `x`, sets `y` to next's output, `*between` (when not null: a caller that needs
  // it, e.g. as the input a recompute re-runs `next` from) to this layer's output, and fills `saved` and
  // `next_saved` exactly as forward() then next.forward() would, bit for bit, so backward, recompute and the
  // stash cannot tell a fused forward from two separate ones. Only `context` (this layer's) is passed: a layer
  // may fuse in only a `next` whose forward ignores its context (an activation; never dropout, whose mask is
  // keyed by its own layer index).
  virtual bool forward_with_next(Layer& next, kernels::Tensor& x, const ForwardContext& context,
                                 LayerSaved& saved, LayerSaved& next_saved, kernels::Tensor* between,
                                 kernels::Tensor& y);

  // Global position of the layer in the model; also stamps its parameters' layer_index.
  void set_global_index(int index);
  int global_index() const { return global_index_; }

 private:
  int global_index_ = -1;
};

}  // namespace sluice::model
