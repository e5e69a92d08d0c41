#include "core/runtime/domain_sampling.h"

namespace sluice::runtime {

kernels::PoolGeometry block_pool_geometry(const DomainField& field, kernels::PoolMode mode, int64_t channels,
                                          const std::vector<int64_t>& kernel) {
  kernels::PoolGeometry g;
  g.mode = mode;
  g.channels = channels;
  g.in = field.grid().block_extent;
  g.kernel = kernel;
  kernels::check_pool_geometry(g);
  return g;
}

kernels::ResampleGeometry block_nearest_geometry(const DomainField& field, int64_t channels,
                                                 const std::vector<int64_t>& factor) {
  kernels::ResampleGeometry g;
  g.mode = kernels::ResampleMode::kNearest;
  g.channels = channels;
  g.in = field.grid().block_extent;
  g.factor = factor;
  kernels::check_resample_geometry(g);
  return g;
}

namespace {

kernels::TiledUpsample tiled_of(const DomainField& field, int64_t channels, const std::vector<int64_t>& factor) {
  kernels::TiledUpsample t;
  t.resample.mode = kernels::ResampleMode::kLinear;
  t.resample.channels = channels;
  t.resample.in = field.grid().global;
  t.resample.factor = factor;
  t.grid = field.grid();
  kernels::check_tiled_upsample(t);
  return t;
}

}  // namespace

DomainLinearUpsample::DomainLinearUpsample(kernels::Backend& backend, const DomainField& field, int64_t channels,
                                           const std::vector<int64_t>& factor)
    : backend_(backend), field_(field), out_field_(field.refined(factor)), tiled_(tiled_of(field, channels, factor)) {}

kernels::Tensor DomainLinearUpsample::forward(const kernels::Tensor& x) const { return forward_padded(pad_input(x)); }

kernels::Tensor DomainLinearUpsample::pad_input(const kernels::Tensor& x) const {
  const std::vector<int64_t> one(field_.grid().dims(), 1);
  return field_.padded(x, tiled_.resample.channels, one, one);
}

kernels::Tensor DomainLinearUpsample::forward_padded(const kernels::Tensor& x_padded) const {
  kernels::Tensor y = backend_.empty(x_padded.rows(), tiled_.resample.channels * out_field_.grid().block_points());
  kernels::tiled_upsample_forward(backend_, tiled_, x_padded, y);
  return y;
}

kernels::Tensor DomainLinearUpsample::backward_data(const kernels::Tensor& dy) const {
  const std::vector<int64_t>& f = tiled_.resample.factor;
  const kernels::Tensor dy_padded = out_field_.padded(dy, tiled_.resample.channels, f, f);
  kernels::Tensor dx = backend_.empty(dy.rows(), tiled_.resample.channels * field_.grid().block_points());
  kernels::tiled_upsample_backward_data(backend_, tiled_, dy_padded, dx);
  return dx;
}

}  // namespace sluice::runtime
