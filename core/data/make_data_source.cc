#include "core/data/make_data_source.h"

#include <string>

#include "core/common/error.h"
#include "core/data/hdf5_data.h"
#include "core/data/synthetic_data.h"

namespace sluice::data {

int64_t model_output_features(const config::ModelSpec& model) {
  // No custom widths here: a custom layer makes the width unknown (-1) until a later linear layer sets it.
  return config::output_features(model);
}

std::unique_ptr<DataSource> make_data_source(const config::Config& config) {
  const int64_t target_features = model_output_features(config.model);
  if (target_features < 0 && config.data.type == config::DataType::kSynthetic) {
    throw Error(ErrorCode::kConfig,
                "config: data.type synthetic needs the model's output width, but a custom layer comes after the "
                "last linear layer; end the model with a linear layer or pass the width to make_data_source");
  }
  return make_data_source(config, target_features);
}

std::unique_ptr<DataSource> make_data_source(const config::Config& config, int64_t target_features) {
  const config::DataSpec& data = config.data;
  switch (data.type) {
    case config::DataType::kSynthetic: {
      const TargetKind kind =
          config.loss == model::LossKind::kCrossEntropy ? TargetKind::kOneHot : TargetKind::kRegression;
      const int64_t points =
          config::field_points(config::output_shape(config.model.layers, config::input_shape_of(config.model)));
      return std::make_unique<SyntheticData>(config.seed, config.model.inputs, target_features, kind, points);
    }
    case config::DataType::kHdf5: {
      auto source = std::make_unique<Hdf5Data>(data.path, data.inputs, data.targets, data.batch, config.model.inputs,
                                               target_features);
      source->require_sample_shapes(config::input_shape_of(config.model),
                                    config::output_shape(config.model.layers, config::input_shape_of(config.model)));
      return source;
    }
    case config::DataType::kExternal: return nullptr;
  }
  throw Error(ErrorCode::kInternal, "data.type " + std::to_string(static_cast<int>(data.type)) + " is unknown");
}

}  // namespace sluice::data
