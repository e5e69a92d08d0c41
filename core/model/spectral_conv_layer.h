// spectral_conv: the Fourier neural operator's spectral convolution (the FNO paper's SpectralConv1d/2d/3d) on
// periodic fields of 1, 2 or 3 spatial dimensions: real FFT over the extents, the kept modes (±m in every non-last
// dimension, 0..m−1 in the last) mixed over the channels by complex weights, inverse real FFT to the same extents.
// No bias (the paper's layer has none; fno_block adds its 1 × 1 convolution's). One parameter, `weight`, stored as
// [in, out, 2·m1, .., 2·m(k−1), mk, 2] (kernels/spectral_geometry.h; real, imaginary last): in a non-last dimension
// the first m rows are the paper's low modes 0..m−1, the next m its high modes −m..−1, so for 2-D the paper's
// weights1 is weight[:, :, :m1, :, :] and weights2 weight[:, :, m1:, :, :] (as complex numbers), and for 3-D its
// weights1..4 are the blocks (low, low), (high, low), (low, high), (high, high) of dimensions 1 and 2.
#pragma once

#include "core/model/layer.h"
#include "kernels/backend.h"
#include "kernels/spectral_geometry.h"

namespace sluice::model {

// The spectral weight as a Parameter named `name`: value [in][weight_cols], stored shape as above.
Parameter spectral_weight(kernels::Backend& backend, const kernels::SpectralGeometry& geometry, std::string name);
// The FNO code's initial values: uniform in [0, 1/(in·out)) for the real and the imaginary parts alike, from the
// layer's own stream `parameter`.
void init_spectral_weight(kernels::Backend& backend, const kernels::SpectralGeometry& geometry, uint64_t seed,
                          int layer_index, int parameter, Parameter& weight);

class SpectralConvLayer : public Layer {
 public:
  SpectralConvLayer(kernels::Backend& backend, const kernels::SpectralGeometry& geometry);

  std::string type() const override { return "spectral_conv"; }
  int64_t in_features() const override { return geometry_.in_features(); }
  int64_t out_features() const override { return geometry_.out_features(); }
  double flops_per_sample() const override;
  std::vector<Parameter*> parameters() override { return {&weight_}; }
  void init(uint64_t seed) override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_weight(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_input_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  kernels::Backend& backend_;
  kernels::SpectralGeometry geometry_;
  Parameter weight_;
};

}  // namespace sluice::model
