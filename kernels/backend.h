// The compute operations layers, losses and optimizers need, behind one interface so that a device backend
// (CUDA) can be added as new files. Every op works on Tensors of the backend's own device; shapes are checked
// once, by Backend itself (kernels/shape_check.h), and a mismatch throws Error(kInvalidArgument) naming the op,
// the operand and both shapes.
// Conventions: outputs are the last arguments; "accumulate" ops ADD into their output (grad += ...), all
// others overwrite it. Outputs must already have the right shape (allocate them with `zeros`).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "kernels/activation.h"
#include "kernels/conv_geometry.h"
#include "kernels/gemm_precision.h"
#include "kernels/norm_geometry.h"
#include "kernels/host_staging.h"
#include "kernels/rng.h"
#include "kernels/spectral_geometry.h"
#include "kernels/tensor.h"

namespace sluice::kernels {

enum class Transpose { kNo, kYes };

// Multi-head self-attention over each sample's `tokens` tokens of `dim` features (attention_forward).
struct AttentionGeometry {
  int64_t tokens = 0;
  int64_t dim = 0;    // heads · head_dim
  int64_t heads = 0;  // divides dim
  // Attention dropout (timm's attn_drop): each probability is kept, scaled by 1/(1 − dropout), when
  // uniform_floats(stream) of its element (sample, head, query, key) is >= dropout; 0: none. `stream` must be a
  // per-sample stream of heads · tokens² elements per row (dropout_stream), so a mask is its sample's alone.
  float dropout = 0.0f;
  RngStream stream;
  int64_t head_dim() const { return dim / heads; }
};

struct SgdHyper {
  float lr = 1e-3f;
  float momentum = 0.0f;
  float weight_decay = 0.0f;  // L2 added to the gradient (classic SGD), not decoupled
};

struct AdamWHyper {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // decoupled: param *= 1 - lr * weight_decay before the Adam step
};

// The operands of one tensor's update in sgd_update_many / adamw_update_many (the per-tensor ops' arguments as
// pointers, so an optimizer can build the list once and reuse it every step). All must share param's shape, and
// no tensor may appear in two slots: a device backend updates the slots concurrently.
struct SgdSlot {
  const Tensor* grad = nullptr;
  Tensor* velocity = nullptr;
  Tensor* param = nullptr;
};

struct AdamWSlot {
  const Tensor* grad = nullptr;
  Tensor* exp_avg = nullptr;
  Tensor* exp_avg_sq = nullptr;
  Tensor* param = nullptr;
};

// Checks every slot before anything is updated, so a bad slot never leaves the list half-updated: a null operand,
// one not on `device` or a shape mismatch throws Error(kInvalidArgument) "<op>: slot <index>: <operand> ...".
void require_valid_slots(const char* op, Device device, const std::vector<SgdSlot>& slots);
void require_valid_slots(const char* op, Device device, const std::vector<AdamWSlot>& slots);

// Non-virtual interface: the public ops below check the shape contract (and the other argument rules: dropout
// probability, AdamW step, optimizer slots) once, here, for every backend, then call the protected `*_impl` op a
// backend implements; an implementation may assume its operands have the documented shapes. Operands on the
// wrong device are the backend's to reject (require_on_device), checked before the shapes.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual Device device() const = 0;
  // What the layout print shows for this rank, e.g. "cpu" or "cuda:1".
  virtual std::string device_name() const { return device() == Device::kHost ? "cpu" : "device"; }
  // The precision gemm() multiplies in, set once from the config key `gemm_precision` before any op runs. The
  // default is right for fp32-only backends (the CPU's): fp32 is accepted, tf32/bf16 throw Error(kUnsupported)
  // naming the precision and device_name(). Backends with reduced-precision GEMMs (CUDA) override both.
  virtual void set_gemm_precision(GemmPrecision precision) { require_fp32_gemm(precision, device_name()); }
  virtual GemmPrecision gemm_precision() const { return GemmPrecision::kFp32; }
  virtual Tensor zeros(int64_t rows, int64_t cols) = 0;
  // A tensor with unspecified contents, for an output the next op overwrites in full (a GEMM with beta = 0, an
  // activation, a loss gradient, a receive): it skips the zero-fill, a whole pass over memory on a GPU. Never
  // for an output an op accumulates into.
  virtual Tensor empty(int64_t rows, int64_t cols) { return zeros(rows, cols); }
  // Copies between the backend's memory and plain host arrays of rows*cols floats.
  virtual Tensor from_host(int64_t rows, int64_t cols, const float* values) = 0;
  virtual void to_host(const Tensor& tensor, float* values) = 0;
  // Raw-pointer copies to and from host buffers, for transports that stage device tensors through host memory.
  // The default is right for backends whose tensors are host memory; device backends override it.
  virtual HostStaging& host_staging() { return host_memory_staging(); }

  // c = alpha * op(a) * op(b) + beta * c. beta = 1 accumulates (used for weight gradients).
  void gemm(Transpose transpose_a, Transpose transpose_b, float alpha, const Tensor& a, const Tensor& b, float beta,
            Tensor& c);
  // y[r][c] += bias[0][c]
  void add_bias(const Tensor& bias, Tensor& y);
  // bias_grad[0][c] += sum over r of dy[r][c]
  void accumulate_bias_grad(const Tensor& dy, Tensor& bias_grad);

  void activation_forward(Activation activation, const Tensor& x, Tensor& y);
  // A linear map's bias add and the activation after it in one pass over memory (one kernel launch on a GPU
  // instead of two): pre[r][c] += bias[0][c], then y = activation(pre). Leaves pre and y with exactly the bits
  // add_bias followed by activation_forward gives; pre stays what a GELU's backward differentiates from.
  void bias_activation_forward(Activation activation, const Tensor& bias, Tensor& pre, Tensor& y);
  // `saved` is the input x if activation_backward_uses_input(activation), else the output y.
  void activation_backward(Activation activation, const Tensor& saved, const Tensor& dy, Tensor& dx);

  // Per row: y = gamma * (x - mean) * rstd + beta; mean and rstd are [rows][1] and kept for backward.
  void layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y, Tensor& mean,
                         Tensor& rstd);
  void layernorm_backward_input(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                const Tensor& rstd, Tensor& dx);
  void layernorm_accumulate_param_grads(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                        Tensor& gamma_grad, Tensor& beta_grad);

  // Inverted dropout: element i is kept (scaled by 1/(1-p)) when uniform_floats(stream)[i] >= p. The mask is
  // regenerated from `stream` on backward, so nothing but the stream needs to be stashed. p must be in [0, 1); a
  // per-sample stream (dropout_stream) must draw rows of the tensor's width, so row r's mask is its sample's.
  void dropout_forward(const Tensor& x, float p, const RngStream& stream, Tensor& y);
  void dropout_backward(const Tensor& dy, float p, const RngStream& stream, Tensor& dx);
  // The same on one block of each sample's field (a domain-split field): element f of row r is kept when the
  // per-sample stream's draw for the WHOLE field's feature of f is >= p (block_uniform_floats), so the block's mask
  // is the corresponding part of dropout_forward's over the whole field (on the whole field as one block, the same
  // bits). x has key.block_features() columns; `stream` must draw rows of key.field_features() (dropout_stream).
  void dropout_block_forward(const Tensor& x, float p, const RngStream& stream, const FieldBlockKey& key, Tensor& y);
  void dropout_block_backward(const Tensor& dy, float p, const RngStream& stream, const FieldBlockKey& key,
                              Tensor& dx);

  void fill(float value, Tensor& x);
  void fill_uniform(const RngStream& stream, float low, float high, Tensor& x);
  void add(const Tensor& a, const Tensor& b, Tensor& out);  // out = a + b
  void axpy(float alpha, const Tensor& x, Tensor& y);       // y += alpha * x
  void scale(float alpha, Tensor& x);                       // x *= alpha
  void copy(const Tensor& source, Tensor& destination);
  double sum_of_squares(const Tensor& x);

  // Returns the sum over all elements of (pred - target)^2; grad = grad_scale * 2 * (pred - target).
  double mse(const Tensor& pred, const Tensor& target, float grad_scale, Tensor& grad);
  // Rows of `target` are distributions over classes. Returns the sum over rows of -sum_c target*log_softmax;
  // grad = grad_scale * (softmax * sum_c target - target).
  double softmax_cross_entropy(const Tensor& logits, const Tensor& target, float grad_scale, Tensor& grad);
  // The same at every point of a field (PyTorch's CrossEntropyLoss on [N, C, D..]): logits, target and grad are
  // [samples][channels · points], a sample's element (c, p) at c · points + p, and at each point the target's
  // channels are a distribution. Returns the sum over samples and points of −Σ_c target · log_softmax (the softmax
  // over the channels at that point); grad = grad_scale · (softmax · Σ_c target − target). `channels` must divide
  // the width. The sum is in double, points in order within a sample, samples in order, so the bits depend on
  // neither the thread count nor the split. A backend without it throws Error(kUnsupported) naming the op.
  double channel_softmax_cross_entropy(int64_t channels, const Tensor& logits, const Tensor& target,
                                       float grad_scale, Tensor& grad);

  // velocity = momentum * velocity + (grad + weight_decay * param); param -= lr * velocity
  void sgd_update(const SgdHyper& hyper, const Tensor& grad, Tensor& velocity, Tensor& param);
  // `step` is the 1-based count of updates including this one (for bias correction).
  void adamw_update(const AdamWHyper& hyper, int64_t step, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
                    Tensor& param);
  // The per-tensor updates above over a list of tensors, with the same results bit for bit per tensor. Every slot
  // is checked (require_valid_slots) before anything is updated.
  void sgd_update_many(const SgdHyper& hyper, const std::vector<SgdSlot>& slots);
  void adamw_update_many(const AdamWHyper& hyper, int64_t step, const std::vector<AdamWSlot>& slots);

  // Fields (kernels/conv_geometry.h: x [samples][in_features], weight [out][weight_cols], bias [1][out],
  // y [samples][out_features]). A backend without these ops throws Error(kUnsupported) naming the op and device.
  // y = conv(x, weight) (+ bias when `bias` is not null), with the geometry's implicit zero padding.
  void conv_forward(const ConvGeometry& geometry, const Tensor& x, const Tensor& weight, const Tensor* bias,
                    Tensor& y);
  // dx = dL/dx of the convolution for dL/dy = dy (overwrites dx).
  void conv_backward_data(const ConvGeometry& geometry, const Tensor& dy, const Tensor& weight, Tensor& dx);
  // weight_grad += dL/dweight, bias_grad += dL/dbias (skipped when null). The sum over samples is added in
  // sample order, so the bits depend on neither the thread count nor how the samples are shared out.
  void conv_accumulate_param_grads(const ConvGeometry& geometry, const Tensor& x, const Tensor& dy,
                                   Tensor& weight_grad, Tensor* bias_grad);
  // Column blocks of two tensors with the same rows (a skip connection's tensor carried beside the main one):
  // destination[r][destination_col + j] = (copy) or += (add) source[r][source_col + j] for j < count.
  void copy_columns(const Tensor& source, int64_t source_col, Tensor& destination, int64_t destination_col,
                    int64_t count);
  void add_columns(const Tensor& source, int64_t source_col, Tensor& destination, int64_t destination_col,
                   int64_t count);
  // y = x with explicit periodic or reflect padding around each sample's field (y [samples][out_features]).
  void pad_forward(const PadGeometry& geometry, const Tensor& x, Tensor& y);
  // dx = the sum, for each element of x, of dy over every place of y it was copied to (overwrites dx).
  void pad_backward(const PadGeometry& geometry, const Tensor& dy, Tensor& dx);
  // Pooling (x [samples][in_features], y [samples][out_features]); each sample's bits do not depend on its batch.
  void pool_forward(const PoolGeometry& geometry, const Tensor& x, Tensor& y);
  // dx = dL/dx for dL/dy = dy (overwrites dx); `x` is the forward's input (max pooling finds its maxima again).
  void pool_backward(const PoolGeometry& geometry, const Tensor& x, const Tensor& dy, Tensor& dx);
  // Upsampling by integer factors, nearest or linear (align_corners=False).
  void resample_forward(const ResampleGeometry& geometry, const Tensor& x, Tensor& y);
  // dx = dL/dx for dL/dy = dy (overwrites dx).
  void resample_backward(const ResampleGeometry& geometry, const Tensor& dy, Tensor& dx);
  // Transposed convolution (weight [in][out · Π kernel], bias [1][out]); as the conv ops, the parameter gradients
  // are added in sample order.
  void deconv_forward(const DeconvGeometry& geometry, const Tensor& x, const Tensor& weight, const Tensor* bias,
                      Tensor& y);
  void deconv_backward_data(const DeconvGeometry& geometry, const Tensor& dy, const Tensor& weight, Tensor& dx);
  void deconv_accumulate_param_grads(const DeconvGeometry& geometry, const Tensor& x, const Tensor& dy,
                                     Tensor& weight_grad, Tensor* bias_grad);
  // Spectral convolution (kernels/spectral_geometry.h: x [samples][in_features], weight [in][weight_cols],
  // y [samples][out_features]): y = irfftn(mix(rfftn(x))) over the spatial extents, the kept modes of each output
  // channel the sum over input channels of the input's mode times the complex weight, every other mode zero (the FNO
  // paper's SpectralConv, no bias). Each sample's bits depend on neither its batch nor the thread count. A backend
  // without these ops throws Error(kUnsupported) naming the op and device.
  void spectral_conv_forward(const SpectralGeometry& geometry, const Tensor& x, const Tensor& weight, Tensor& y);
  // dx = dL/dx for dL/dy = dy (overwrites dx).
  void spectral_conv_backward_data(const SpectralGeometry& geometry, const Tensor& dy, const Tensor& weight,
                                   Tensor& dx);
  // weight_grad += dL/dweight, the samples' contributions added in sample order (as the conv ops').
  void spectral_conv_accumulate_weight_grad(const SpectralGeometry& geometry, const Tensor& x, const Tensor& dy,
                                            Tensor& weight_grad);

  // Normalizations of fields (kernels/norm_geometry.h: x, y, dy, dx [samples][features()], weight, bias and their
  // grads [1][channels]). Statistics are biased (divide by the count), accumulated in double, every sum in a fixed
  // order, so the bits depend on neither the thread count nor how the samples are shared out. A backend without
  // these ops throws Error(kUnsupported) naming the op and device.
  // Group norm (PyTorch's F.group_norm): per sample and group, over the group's channels × all points,
  // y = (x − mean) · rstd · weight[c] + bias[c]; mean and rstd are [samples][groups], kept for the backward.
  void group_norm_forward(const NormGeometry& geometry, const Tensor& x, const Tensor& weight, const Tensor& bias,
                          Tensor& y, Tensor& mean, Tensor& rstd);
  // dx = dL/dx for dL/dy = dy (overwrites dx).
  void group_norm_backward_input(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                 const Tensor& weight, const Tensor& mean, const Tensor& rstd, Tensor& dx);
  // weight_grad[c] += Σ dy · x̂, bias_grad[c] += Σ dy over samples and points (samples in order).
  void group_norm_accumulate_param_grads(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                         const Tensor& mean, const Tensor& rstd, Tensor& weight_grad,
                                         Tensor& bias_grad);
  // Group norm with its statistics formed per canonical tile of a domain-split field (kernels/tiled_norm.h,
  // docs/DOMAIN.md): the sums of one tile come from the two *_partial_sums ops (x, dy: the tile's field alone,
  // geometry.points its points), the caller adds every tile's in global tile order, and the two ops "with given
  // statistics" apply the totals point by point to any box (a whole block: each output depends on its own point
  // and the statistics alone). Sums are in double, a set's elements in order on the CPU (a fixed tree on a GPU).
  // Returns [samples][groups][2]: per sample and group, the sum of x over the group's channels and points, and the
  // sum of (x − m)² with m that sum / count (the tile's own group mean: the tiles' totals combine without the
  // cancellation of a sum of squares).
  std::vector<double> group_norm_partial_sums(const NormGeometry& geometry, const Tensor& x);
  // y = (x − mean) · rstd · weight[c] + bias[c] with the given mean and rstd [samples][groups] (group_norm_forward's
  // formula and bits for the same statistics).
  void group_norm_normalize(const NormGeometry& geometry, const Tensor& x, const Tensor& weight, const Tensor& bias,
                            const Tensor& mean, const Tensor& rstd, Tensor& y);
  // Returns [samples][groups][2]: Σ g and Σ g · x̂ over the group's channels and points, g = dy · weight[c],
  // x̂ = (x − mean) · rstd (group_norm_backward_input's sums).
  std::vector<double> group_norm_backward_partial_sums(const NormGeometry& geometry, const Tensor& dy,
                                                       const Tensor& x, const Tensor& weight, const Tensor& mean,
                                                       const Tensor& rstd);
  // dx = rstd · (g − mean_g − x̂ · mean_g_xhat) with the given means of g and g · x̂ over the whole group
  // (mean_g, mean_g_xhat [samples][groups]; group_norm_backward_input's formula for the same means).
  void group_norm_backward_with_sums(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                     const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                     const Tensor& mean_g, const Tensor& mean_g_xhat, Tensor& dx);
  // Layernorm over the channels at each point (PyTorch: channels moved last, F.layer_norm over C): the same
  // three ops with statistics per sample and point, mean and rstd [samples][points]; geometry.groups is not read.
  void channel_layernorm_forward(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                 const Tensor& bias, Tensor& y, Tensor& mean, Tensor& rstd);
  void channel_layernorm_backward_input(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                        const Tensor& weight, const Tensor& mean, const Tensor& rstd, Tensor& dx);
  void channel_layernorm_accumulate_param_grads(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                                const Tensor& mean, const Tensor& rstd, Tensor& weight_grad,
                                                Tensor& bias_grad);

  // Tokens (core/model/transformer_layer.h): a sample's T tokens of D features are held channel-first, [D, T]
  // ([samples][D·T], element (d, t) at d·T + t), so a field's layernorm over the channels at each point normalizes
  // each token; the transformer's products run on them one row per token ([samples·T][D]). A backend without these
  // ops throws Error(kUnsupported) naming the op and device.
  // y [samples·T][D] = each sample's [D, T] transposed; rows_to_tokens is the inverse.
  void tokens_to_rows(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y);
  void rows_to_tokens(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y);
  // y[r][j] = x[r][source[j]] (a permutation of each row's columns when `source` is one; unpatch).
  void gather_columns(const std::vector<int64_t>& source, const Tensor& x, Tensor& y);
  // Multi-head self-attention of each sample's tokens: qkv [samples·T][3D] (timm's layout: q, k, v, each heads ×
  // D/heads), out [samples·T][D] = dropout(softmax(q kᵀ / √(D/heads))) v per head, probs [samples][heads·T·T] the
  // softmax (before dropout) kept for the backward, which draws the dropout mask again from the geometry's stream.
  // Each sample and head is computed alone, the same way on any thread and in any batch.
  void attention_forward(const AttentionGeometry& geometry, const Tensor& qkv, Tensor& out, Tensor& probs);
  // dqkv = dL/dqkv for dL/dout = dout (overwrites dqkv).
  void attention_backward(const AttentionGeometry& geometry, const Tensor& qkv, const Tensor& probs,
                          const Tensor& dout, Tensor& dqkv);

 protected:
  // Throws when `tensor` (named `operand` of `op` in the message) is not in this backend's memory. Called for
  // every operand of an op before its shapes are checked. The default accepts everything: the CPU backend's
  // ops trust their callers here.
  virtual void require_on_device(const char* op, const char* operand, const Tensor& tensor) const;

  // The ops themselves, called by the public ops above once the arguments are checked. Same meaning and
  // conventions as the public op of the same name.
  virtual void gemm_impl(Transpose transpose_a, Transpose transpose_b, float alpha, const Tensor& a, const Tensor& b,
                         float beta, Tensor& c) = 0;
  virtual void add_bias_impl(const Tensor& bias, Tensor& y) = 0;
  virtual void accumulate_bias_grad_impl(const Tensor& dy, Tensor& bias_grad) = 0;

  virtual void activation_forward_impl(Activation activation, const Tensor& x, Tensor& y) = 0;
  virtual void bias_activation_forward_impl(Activation activation, const Tensor& bias, Tensor& pre, Tensor& y) = 0;
  virtual void activation_backward_impl(Activation activation, const Tensor& saved, const Tensor& dy, Tensor& dx) = 0;

  virtual void layernorm_forward_impl(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                      Tensor& mean, Tensor& rstd) = 0;
  virtual void layernorm_backward_input_impl(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                             const Tensor& rstd, Tensor& dx) = 0;
  virtual void layernorm_accumulate_param_grads_impl(const Tensor& dy, const Tensor& x, const Tensor& mean,
                                                     const Tensor& rstd, Tensor& gamma_grad, Tensor& beta_grad) = 0;

  virtual void dropout_forward_impl(const Tensor& x, float p, const RngStream& stream, Tensor& y) = 0;
  virtual void dropout_backward_impl(const Tensor& dy, float p, const RngStream& stream, Tensor& dx) = 0;

  virtual void fill_impl(float value, Tensor& x) = 0;
  virtual void fill_uniform_impl(const RngStream& stream, float low, float high, Tensor& x) = 0;
  virtual void add_impl(const Tensor& a, const Tensor& b, Tensor& out) = 0;
  virtual void axpy_impl(float alpha, const Tensor& x, Tensor& y) = 0;
  virtual void scale_impl(float alpha, Tensor& x) = 0;
  virtual void copy_impl(const Tensor& source, Tensor& destination) = 0;
  virtual double sum_of_squares_impl(const Tensor& x) = 0;

  virtual double mse_impl(const Tensor& pred, const Tensor& target, float grad_scale, Tensor& grad) = 0;
  virtual double softmax_cross_entropy_impl(const Tensor& logits, const Tensor& target, float grad_scale,
                                            Tensor& grad) = 0;

  virtual void sgd_update_impl(const SgdHyper& hyper, const Tensor& grad, Tensor& velocity, Tensor& param) = 0;
  virtual void adamw_update_impl(const AdamWHyper& hyper, int64_t step, const Tensor& grad, Tensor& exp_avg,
                                 Tensor& exp_avg_sq, Tensor& param) = 0;
  // The default loops over the per-tensor op (so a backend without a multi-tensor kernel, the CPU's, gives
  // exactly its per-tensor bits); device backends override it to update many tensors per launch.
  virtual void sgd_update_many_impl(const SgdHyper& hyper, const std::vector<SgdSlot>& slots);
  virtual void adamw_update_many_impl(const AdamWHyper& hyper, int64_t step, const std::vector<AdamWSlot>& slots);

  // Field ops; the defaults throw Error(kUnsupported) "<op> is not available on <device_name()>".
  virtual void conv_forward_impl(const ConvGeometry& geometry, const Tensor& x, const Tensor& weight,
                                 const Tensor* bias, Tensor& y);
  virtual void conv_backward_data_impl(const ConvGeometry& geometry, const Tensor& dy, const Tensor& weight,
                                       Tensor& dx);
  virtual void conv_accumulate_param_grads_impl(const ConvGeometry& geometry, const Tensor& x, const Tensor& dy,
                                                Tensor& weight_grad, Tensor* bias_grad);
  virtual void copy_columns_impl(const Tensor& source, int64_t source_col, Tensor& destination,
                                 int64_t destination_col, int64_t count, bool add);
  virtual void pad_forward_impl(const PadGeometry& geometry, const Tensor& x, Tensor& y);
  virtual void pad_backward_impl(const PadGeometry& geometry, const Tensor& dy, Tensor& dx);
  // out = in masked and scaled as dropout_block_forward describes (forward and backward alike).
  virtual void dropout_block_impl(const Tensor& in, float p, const RngStream& stream, const FieldBlockKey& key,
                                  Tensor& out);
  virtual double channel_softmax_cross_entropy_impl(int64_t channels, const Tensor& logits, const Tensor& target,
                                                    float grad_scale, Tensor& grad);
  // Normalizations of fields; the defaults throw Error(kUnsupported) as the field ops' do.
  virtual void group_norm_forward_impl(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                       const Tensor& bias, Tensor& y, Tensor& mean, Tensor& rstd);
  virtual void group_norm_backward_input_impl(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                              const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                              Tensor& dx);
  virtual void group_norm_accumulate_param_grads_impl(const NormGeometry& geometry, const Tensor& dy,
                                                      const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                                      Tensor& weight_grad, Tensor& bias_grad);
  virtual std::vector<double> group_norm_partial_sums_impl(const NormGeometry& geometry, const Tensor& x);
  virtual void group_norm_normalize_impl(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                         const Tensor& bias, const Tensor& mean, const Tensor& rstd, Tensor& y);
  virtual std::vector<double> group_norm_backward_partial_sums_impl(const NormGeometry& geometry, const Tensor& dy,
                                                                    const Tensor& x, const Tensor& weight,
                                                                    const Tensor& mean, const Tensor& rstd);
  virtual void group_norm_backward_with_sums_impl(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                                  const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                                  const Tensor& mean_g, const Tensor& mean_g_xhat, Tensor& dx);
  virtual void channel_layernorm_forward_impl(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                              const Tensor& bias, Tensor& y, Tensor& mean, Tensor& rstd);
  virtual void channel_layernorm_backward_input_impl(const NormGeometry& geometry, const Tensor& dy,
                                                     const Tensor& x, const Tensor& weight, const Tensor& mean,
                                                     const Tensor& rstd, Tensor& dx);
  virtual void channel_layernorm_accumulate_param_grads_impl(const NormGeometry& geometry, const Tensor& dy,
                                                             const Tensor& x, const Tensor& mean,
                                                             const Tensor& rstd, Tensor& weight_grad,
                                                             Tensor& bias_grad);
  virtual void pool_forward_impl(const PoolGeometry& geometry, const Tensor& x, Tensor& y);
  virtual void pool_backward_impl(const PoolGeometry& geometry, const Tensor& x, const Tensor& dy, Tensor& dx);
  virtual void resample_forward_impl(const ResampleGeometry& geometry, const Tensor& x, Tensor& y);
  virtual void resample_backward_impl(const ResampleGeometry& geometry, const Tensor& dy, Tensor& dx);
  virtual void deconv_forward_impl(const DeconvGeometry& geometry, const Tensor& x, const Tensor& weight,
                                   const Tensor* bias, Tensor& y);
  virtual void deconv_backward_data_impl(const DeconvGeometry& geometry, const Tensor& dy, const Tensor& weight,
                                         Tensor& dx);
  virtual void deconv_accumulate_param_grads_impl(const DeconvGeometry& geometry, const Tensor& x, const Tensor& dy,
                                                  Tensor& weight_grad, Tensor* bias_grad);
  // Spectral convolution; the defaults throw Error(kUnsupported) as the field ops' do.
  virtual void spectral_conv_forward_impl(const SpectralGeometry& geometry, const Tensor& x, const Tensor& weight,
                                          Tensor& y);
  virtual void spectral_conv_backward_data_impl(const SpectralGeometry& geometry, const Tensor& dy,
                                                const Tensor& weight, Tensor& dx);
  virtual void spectral_conv_accumulate_weight_grad_impl(const SpectralGeometry& geometry, const Tensor& x,
                                                         const Tensor& dy, Tensor& weight_grad);
  // Token ops; the defaults throw Error(kUnsupported) as the field ops' do.
  virtual void tokens_to_rows_impl(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y);
  virtual void rows_to_tokens_impl(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y);
  virtual void gather_columns_impl(const std::vector<int64_t>& source, const Tensor& x, Tensor& y);
  virtual void attention_forward_impl(const AttentionGeometry& geometry, const Tensor& qkv, Tensor& out,
                                      Tensor& probs);
  virtual void attention_backward_impl(const AttentionGeometry& geometry, const Tensor& qkv, const Tensor& probs,
                                       const Tensor& dout, Tensor& dqkv);

 private:
  void require_all_on_device(const char* op,
                             std::initializer_list<std::pair<const char*, const Tensor*>> operands) const;
};

}  // namespace sluice::kernels
