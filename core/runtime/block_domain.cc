#include "core/runtime/block_domain.h"

#include <algorithm>

#include "core/runtime/domain_conv.h"
#include "core/runtime/domain_deconv.h"
#include "core/runtime/domain_loss.h"
#include "core/runtime/domain_sampling.h"

namespace sluice::runtime {

namespace {

class ConvOps : public model::DomainConvOps {
 public:
  ConvOps(kernels::Backend& backend, const DomainField& field, const kernels::ConvGeometry& conv, bool with_bias,
          const std::string& name)
      : conv_(backend, field, conv, with_bias, name) {}
  kernels::Tensor pad_input(const kernels::Tensor& x) override { return conv_.pad_input(x); }
  kernels::Tensor forward(const kernels::Tensor& x_padded, const kernels::Tensor& weight,
                          const kernels::Tensor* bias) override {
    return conv_.forward(x_padded, weight, bias);
  }
  kernels::Tensor backward_data(const kernels::Tensor& dy, const kernels::Tensor& weight) override {
    return conv_.backward_data(dy, weight);
  }
  void accumulate_param_grads(const kernels::Tensor& x_padded, const kernels::Tensor& dy) override {
    conv_.accumulate_param_grads(x_padded, dy);
  }
  void finish_step(kernels::Tensor& weight_grad, kernels::Tensor* bias_grad) override {
    conv_.finish_step(weight_grad, bias_grad);
  }

 private:
  DomainConv conv_;
};

class DeconvOps : public model::DomainDeconvOps {
 public:
  DeconvOps(kernels::Backend& backend, const DomainField& field, const kernels::DeconvGeometry& deconv,
            bool with_bias, const std::string& name)
      : deconv_(backend, field, deconv, with_bias, name) {}
  kernels::Tensor forward(const kernels::Tensor& x, const kernels::Tensor& weight,
                          const kernels::Tensor* bias) override {
    return deconv_.forward(x, weight, bias);
  }
  kernels::Tensor backward_data(const kernels::Tensor& dy, const kernels::Tensor& weight) override {
    return deconv_.backward_data(dy, weight);
  }
  void accumulate_param_grads(const kernels::Tensor& x, const kernels::Tensor& dy) override {
    deconv_.accumulate_param_grads(x, dy);
  }
  void finish_step(kernels::Tensor& weight_grad, kernels::Tensor* bias_grad) override {
    deconv_.finish_step(weight_grad, bias_grad);
  }

 private:
  DomainDeconv deconv_;
};

class UpsampleOps : public model::DomainUpsampleOps {
 public:
  UpsampleOps(kernels::Backend& backend, const DomainField& field, int64_t channels,
              const std::vector<int64_t>& factor)
      : up_(backend, field, channels, factor) {}
  kernels::Tensor forward(const kernels::Tensor& x) override { return up_.forward(x); }
  kernels::Tensor backward_data(const kernels::Tensor& dy) override { return up_.backward_data(dy); }

 private:
  DomainLinearUpsample up_;
};

}  // namespace

model::FieldDomain& BlockDomain::level(const std::vector<int64_t>& factor, bool refine) {
  if (std::all_of(factor.begin(), factor.end(), [](int64_t f) { return f == 1; }) &&
      factor.size() == field_.grid().dims()) {
    return *this;
  }
  std::unique_ptr<BlockDomain>& slot = levels_[{refine, factor}];
  if (!slot) slot = std::make_unique<BlockDomain>(refine ? field_.refined(factor) : field_.coarsened(factor));
  return *slot;
}

model::FieldDomain& BlockDomain::coarsened(const std::vector<int64_t>& down) { return level(down, false); }

model::FieldDomain& BlockDomain::refined(const std::vector<int64_t>& up) { return level(up, true); }

std::unique_ptr<model::DomainConvOps> BlockDomain::conv(kernels::Backend& backend, const kernels::ConvGeometry& conv,
                                                        bool with_bias, const std::string& name) {
  return std::make_unique<ConvOps>(backend, field_, conv, with_bias, name);
}

std::unique_ptr<model::DomainDeconvOps> BlockDomain::deconv(kernels::Backend& backend,
                                                            const kernels::DeconvGeometry& deconv, bool with_bias,
                                                            const std::string& name) {
  return std::make_unique<DeconvOps>(backend, field_, deconv, with_bias, name);
}

std::unique_ptr<model::DomainUpsampleOps> BlockDomain::linear_upsample(kernels::Backend& backend, int64_t channels,
                                                                       const std::vector<int64_t>& factor) {
  return std::make_unique<UpsampleOps>(backend, field_, channels, factor);
}

double BlockDomain::field_loss(kernels::Backend& backend, kernels::FieldLoss loss, int64_t channels,
                               const kernels::Tensor& pred, const kernels::Tensor& target, float grad_scale,
                               kernels::Tensor& grad, const std::string& what) {
  return domain_field_loss(backend, field_, loss, channels, pred, target, grad_scale, grad, what);
}

}  // namespace sluice::runtime
