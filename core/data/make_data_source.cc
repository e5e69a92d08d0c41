#include "core/data/make_data_source.h"

#include <string>

#include "core/common/error.h"
#include "core/data/field_box.h"
#include "core/data/hdf5_data.h"
#include "core/data/synthetic_data.h"
#include "core/data/synthetic_field_data.h"

namespace sluice::data {

namespace {

TargetKind target_kind(const config::Config& config) {
  return config.loss == model::LossKind::kCrossEntropy ? TargetKind::kOneHot : TargetKind::kRegression;
}

config::SampleShape model_input(const config::Config& config) { return config::input_shape_of(config.model); }
config::SampleShape model_output(const config::Config& config) {
  return config::output_shape(config.model.layers, model_input(config));
}

// Fields in and out, same number of spatial dimensions, every extent known: a point-keyed field source fits.
bool field_to_field(const config::SampleShape& in, const config::SampleShape& out) {
  return config::is_field(in) && config::is_field(out) && in.size() == out.size() && config::features_of(in) > 0 &&
         config::features_of(out) > 0;
}

std::unique_ptr<Hdf5Data> open_hdf5(const config::Config& config, int64_t target_features) {
  const config::DataSpec& data = config.data;
  auto source = std::make_unique<Hdf5Data>(data.path, data.inputs, data.targets, data.batch, config.model.inputs,
                                           target_features);
  source->require_sample_shapes(model_input(config), model_output(config));
  return source;
}

}  // namespace

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
  switch (config.data.type) {
    case config::DataType::kSynthetic: {
      const config::SampleShape in = model_input(config), out = model_output(config);
      if (field_to_field(in, out) && config::features_of(out) == target_features) {
        return std::make_unique<SyntheticFieldData>(config.seed, in, out, target_kind(config));
      }
      return std::make_unique<SyntheticData>(config.seed, config.model.inputs, target_features, target_kind(config),
                                             config::field_points(out));
    }
    case config::DataType::kHdf5: return open_hdf5(config, target_features);
    case config::DataType::kExternal: return nullptr;
  }
  throw Error(ErrorCode::kInternal, "data.type " + std::to_string(static_cast<int>(config.data.type)) + " is unknown");
}

config::DomainBox output_block_box(const config::Config& config, const config::DomainBox& input_box) {
  const config::SampleShape in = model_input(config), out = model_output(config);
  if (!field_to_field(in, out)) {
    throw Error(ErrorCode::kConfig, "data on a block: the model takes " + config::shape_text(in) + " and gives " +
                                        config::shape_text(out) + "; a block of each sample needs input and output "
                                        "fields [C, D..] with the same number of spatial dimensions");
  }
  check_box(input_box, in, "data on a block, input block");
  return scaled_box(input_box, in, out);
}

std::unique_ptr<DataSource> make_block_data_source(const config::Config& config, const config::DomainBox& input_box,
                                                   const config::DomainBox& output_box) {
  const config::DomainBox expected = output_block_box(config, input_box);
  if (output_box.offset != expected.offset || output_box.extent != expected.extent) {
    throw Error(ErrorCode::kInvalidArgument,
                "data on a block: the output block (" + box_text(output_box) + ") is not the input block's (" +
                    box_text(input_box) + " of " + config::shape_text(model_input(config)) + " is " +
                    box_text(expected) + " of the output " + config::shape_text(model_output(config)) + ")");
  }
  switch (config.data.type) {
    case config::DataType::kSynthetic:
      return std::make_unique<SyntheticFieldData>(config.seed, model_input(config), model_output(config),
                                                  target_kind(config), input_box, output_box);
    case config::DataType::kHdf5: {
      auto source = open_hdf5(config, config::features_of(model_output(config)));
      source->select_blocks(input_box, output_box);
      return source;
    }
    case config::DataType::kExternal: return nullptr;
  }
  throw Error(ErrorCode::kInternal, "data.type " + std::to_string(static_cast<int>(config.data.type)) + " is unknown");
}

std::unique_ptr<DataSource> make_data_source_for_block(const config::Config& config, int64_t block) {
  const config::SampleShape in = model_input(config);
  const size_t dims = config::is_field(in) ? in.size() - 1 : 0;
  const std::vector<int> blocks = config.pipeline.domain.empty() ? std::vector<int>(dims, 1) : config.pipeline.domain;
  if (dims == 0 || blocks.size() != dims) {
    throw Error(ErrorCode::kConfig, "data on a block: pipeline.domain has " + std::to_string(blocks.size()) +
                                        " entries but the model's input " + config::shape_text(in) + " has " +
                                        std::to_string(dims) + " spatial dimensions (one entry each)");
  }
  // The tile does not place blocks (only the cuts do); the config's checks refuse a split it does not fit.
  const config::DomainLayout layout =
      config::even_domain_layout(std::vector<int64_t>(in.begin() + 1, in.end()), blocks, std::vector<int64_t>(dims, 1));
  if (block < 0 || block >= layout.block_count()) {
    throw Error(ErrorCode::kInvalidArgument, "data on a block: block " + std::to_string(block) + " of a split into " +
                                                 std::to_string(layout.block_count()) + " blocks (0 .. " +
                                                 std::to_string(layout.block_count() - 1) + ")");
  }
  const config::DomainBox box = layout.box(block);
  return make_block_data_source(config, box, output_block_box(config, box));
}

}  // namespace sluice::data
