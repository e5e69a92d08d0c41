#include "core/model/skip_layer.h"

#include <utility>

#include "core/common/error.h"

namespace sluice::model {

using kernels::Tensor;

SkipLayer::SkipLayer(kernels::Backend& backend, std::unique_ptr<Layer> inner, Join join, std::string own_name,
                     std::string from, int64_t main_in, int64_t main_out, LayerCarry carry)
    : backend_(backend), inner_(std::move(inner)), join_(join), own_name_(std::move(own_name)),
      from_(std::move(from)), main_in_(main_in), main_out_(main_out), carry_(std::move(carry)) {
  if ((inner_ == nullptr) != (join_ != Join::kNone)) {
    throw Error(ErrorCode::kInternal, "a skip layer has an inner layer exactly when it joins nothing");
  }
  if (join_ != Join::kNone && offset_of(carry_.in, main_in_, from_) < 0) {
    throw Error(ErrorCode::kInternal, "a skip reader of '" + from_ + "' does not receive that slot");
  }
}

std::string SkipLayer::type() const {
  if (inner_) return inner_->type();
  return join_ == Join::kConcat ? "concat" : "add";
}

double SkipLayer::flops_per_sample() const {
  return inner_ ? inner_->flops_per_sample() : static_cast<double>(main_out_);
}

std::vector<Parameter*> SkipLayer::parameters() { return inner_ ? inner_->parameters() : std::vector<Parameter*>{}; }

void SkipLayer::init(uint64_t seed) {
  if (inner_) inner_->init(seed);
}

int64_t SkipLayer::offset_of(const std::vector<SkipSlot>& slots, int64_t main, const std::string& name) {
  int64_t offset = main;
  for (const SkipSlot& slot : slots) {
    if (slot.name == name) return offset;
    offset += slot.features;
  }
  return -1;
}

Tensor SkipLayer::columns(const Tensor& t, int64_t first, int64_t count) {
  Tensor part = backend_.empty(t.rows(), count);
  backend_.copy_columns(t, first, part, 0, count);
  return part;
}

// concat: [main | read slot]; add: main + read slot.
Tensor SkipLayer::joined(const Tensor& x, Tensor main) {
  const int64_t read = offset_of(carry_.in, main_in_, from_);
  if (join_ == Join::kAdd) {
    backend_.add_columns(x, read, main, 0, main_in_);
    return main;
  }
  Tensor y = backend_.empty(x.rows(), main_out_);
  backend_.copy_columns(main, 0, y, 0, main_in_);
  backend_.copy_columns(x, read, y, main_in_, main_out_ - main_in_);
  return y;
}

Tensor SkipLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  Tensor main = carry_.in.empty() ? std::move(x) : columns(x, 0, main_in_);
  Tensor y_main;
  if (inner_) {
    y_main = inner_->forward(std::move(main), context, saved);
  } else {
    saved.tensors.clear();
    y_main = joined(x, std::move(main));
  }
  if (carry_.out.empty()) return y_main;
  Tensor y = backend_.empty(y_main.rows(), out_features());
  backend_.copy_columns(y_main, 0, y, 0, main_out_);
  int64_t offset = main_out_;
  for (const SkipSlot& slot : carry_.out) {
    if (carry_.keeps_output && slot.name == own_name_) {
      backend_.copy_columns(y_main, 0, y, offset, slot.features);
    } else {
      backend_.copy_columns(x, offset_of(carry_.in, main_in_, slot.name), y, offset, slot.features);
    }
    offset += slot.features;
  }
  return y;
}

Tensor SkipLayer::main_gradient(const Tensor& dy) {
  if (carry_.out.empty()) return dy;
  Tensor main = columns(dy, 0, main_out_);
  if (carry_.keeps_output) backend_.add_columns(dy, offset_of(carry_.out, main_out_, own_name_), main, 0, main_out_);
  return main;
}

// [dx_main | each carried-in slot's gradient]: a slot passed through takes its gradient from dy; the slot this layer
// read gets the reader's gradient `d_read`, added to what later readers sent back when it rides on.
Tensor SkipLayer::carried_gradients(const Tensor& dy, Tensor dx_main, const Tensor* d_read) {
  if (carry_.in.empty()) return dx_main;
  Tensor dx = backend_.zeros(dy.rows(), in_features());
  backend_.copy_columns(dx_main, 0, dx, 0, main_in_);
  int64_t offset = main_in_;
  for (const SkipSlot& slot : carry_.in) {
    const int64_t later = offset_of(carry_.out, main_out_, slot.name);
    if (later >= 0) backend_.copy_columns(dy, later, dx, offset, slot.features);
    if (d_read != nullptr && slot.name == from_) backend_.add_columns(*d_read, 0, dx, offset, slot.features);
    offset += slot.features;
  }
  return dx;
}

Tensor SkipLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  const Tensor dy_main = main_gradient(dy);
  if (inner_) return carried_gradients(dy, inner_->backward_input(dy_main, saved), nullptr);
  if (join_ == Join::kAdd) return carried_gradients(dy, dy_main, &dy_main);
  const Tensor d_read = columns(dy_main, main_in_, main_out_ - main_in_);
  return carried_gradients(dy, columns(dy_main, 0, main_in_), &d_read);
}

void SkipLayer::backward_weight(const Tensor& dy, LayerSaved& saved) {
  if (inner_) inner_->backward_weight(main_gradient(dy), saved);
}

void SkipLayer::backward_input_without_dx(const Tensor& dy, LayerSaved& saved) {
  if (inner_ && carry_.in.empty()) {
    inner_->backward_input_without_dx(main_gradient(dy), saved);
  } else {
    (void)backward_input(dy, saved);
  }
}

void SkipLayer::backward_without_dx(const Tensor& dy, LayerSaved& saved) {
  if (inner_ && carry_.in.empty()) {
    inner_->backward_without_dx(main_gradient(dy), saved);
  } else {
    Layer::backward_without_dx(dy, saved);
  }
}

void SkipLayer::finish_domain_step() {
  if (inner_) inner_->finish_domain_step();
}

}  // namespace sluice::model
