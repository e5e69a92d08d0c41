// sluice_layer_ops' planning hints (issue 27 item 7): a custom layer's declared forward FLOPs replace the
// 6·in·out estimate in the partition (the balanced split moves), its declared stash bytes reach the model's shape
// (what pipeline.schedule: auto counts), the config's `cost:` wins over both, a struct of the first size-tagged
// version (before the hints) is still accepted, and negative hints are refused (1 rank).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "capi/callback_layer.h"
#include "core/config/config_parser.h"
#include "core/model/model_shape.h"
#include "core/model/partition.h"
#include "tests/capi/misuse_test_support.h"

namespace {

using capi_test::kFeatures;
using capi_test::scale_ops;

// The custom layer first, then three linear layers of its width: by the estimate every layer weighs the same.
std::string config(const std::string& custom_extra = "") {
  return "model:\n  inputs: " + std::to_string(kFeatures) + "\n  layers:\n    - {type: custom, name: scale" +
         custom_extra + "}\n    - {type: linear, outputs: 4}\n    - {type: linear, outputs: 4}\n"
         "    - {type: linear, outputs: 4}\npipeline: {stages: 2, schedule: 1f1b, microbatches: 2}\n"
         "optimizer: {type: sgd, lr: 0.01}\ndata: {type: external, batch: 4}\n";
}

std::vector<int> split_with(const sluice_layer_ops& ops, const std::string& custom_extra = "") {
  const sluice::config::Config cfg = sluice::config::parse_config(config(custom_extra));
  const sluice::model::CustomLayerRegistry registry{
      {"scale", sluice::capi::callback_layer_factory("scale", ops, nullptr)}};
  return sluice::model::balanced_split(sluice::model::flops_of(sluice::model::model_shape(cfg.model, registry)), 2);
}

TEST(LayerCost, DeclaredFlopsMoveTheSplit) {
  sluice_layer_ops ops = scale_ops();
  EXPECT_EQ(split_with(ops), (std::vector<int>{2, 2}));  // 6·4·4 each: even
  ops.forward_flops = 1e6;                                // a costly stencil: alone on the first stage
  EXPECT_EQ(split_with(ops), (std::vector<int>{1, 3}));
  const sluice::config::Config cfg = sluice::config::parse_config(config());
  const sluice::model::CustomLayerRegistry registry{
      {"scale", sluice::capi::callback_layer_factory("scale", ops, nullptr)}};
  EXPECT_DOUBLE_EQ(sluice::model::model_shape(cfg.model, registry)[0].flops, 3e6);  // forward + both backwards
}

TEST(LayerCost, ConfigCostWinsAndBytesReachTheShape) {
  sluice_layer_ops ops = scale_ops();
  ops.forward_flops = 1e6;
  ops.activation_bytes = 64;
  // The config's cost replaces the registered one: cheap again, so the split is even again.
  EXPECT_EQ(split_with(ops, ", cost: {flops: 32}"), (std::vector<int>{2, 2}));
  const sluice::config::Config cfg = sluice::config::parse_config(config(", cost: {flops: 32, bytes: 100}"));
  const sluice::model::CustomLayerRegistry registry{
      {"scale", sluice::capi::callback_layer_factory("scale", ops, nullptr)}};
  const std::vector<sluice::model::LayerShape> shapes = sluice::model::model_shape(cfg.model, registry);
  EXPECT_DOUBLE_EQ(shapes[0].flops, 96.0);
  EXPECT_DOUBLE_EQ(shapes[0].stash_bytes, 100.0);
  const sluice::config::Config plain = sluice::config::parse_config(config());
  EXPECT_DOUBLE_EQ(sluice::model::model_shape(plain.model, registry)[0].stash_bytes, 64.0);
}

TEST(LayerCost, OldStructSizeAcceptedNegativeHintsRefused) {
  std::string yaml = config();
  yaml.replace(yaml.find("stages: 2"), 9, "stages: 1");
  sluice_trainer* t = nullptr;
  ASSERT_EQ(sluice_trainer_create(MPI_COMM_WORLD, yaml.c_str(), &t), SLUICE_OK) << sluice_last_error();
  sluice_layer_ops ops = scale_ops();
  ops.forward_flops = -1;
  EXPECT_EQ(sluice_trainer_register_layer(t, "scale", &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("forward_flops and activation_bytes must be >= 0"),
            std::string::npos)
      << sluice_last_error();
  ops = scale_ops();
  ops.struct_size = offsetof(sluice_layer_ops, forward_flops);  // built against the header before the hints
  EXPECT_EQ(sluice_trainer_register_layer(t, "scale", &ops, nullptr), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
  sluice_trainer_destroy(t);
}

}  // namespace
