// What `sluice inspect` reports about a checkpoint: step, layout at save time, layers with their parameter sizes,
// and whether every checksum verified. Kept out of the CLI module so it can be tested and reused (e.g. in logs).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/save_layout.h"

namespace sluice::checkpoint {

struct TensorSummary {
  std::string name;  // path below the layer group: "weight", "weight/exp_avg"
  std::vector<int64_t> dims;
  int64_t elements = 0;
};

struct LayerSummary {
  int layer = 0;
  // The layer's type from the run's config ("linear", "custom:heat_stencil": a custom layer by the name the
  // application registered it under). summarize() leaves it empty (this module does not parse configs);
  // `sluice inspect` fills it (tools/sluice/layer_types.h). Printed only when set.
  std::string type;
  std::vector<TensorSummary> parameters;       // /model/layer_NNNN/...
  std::vector<TensorSummary> optimizer_state;  // /optimizer/layer_NNNN/...
  std::vector<TensorSummary> accumulation;     // /accumulation/layer_NNNN/...
};

// One registered application array (/application/...): name is the path below /application, e.g. "field" or
// "counter/rank_1".
struct ApplicationArraySummary {
  std::string name;
  std::string type;  // float32, float64, int32, int64
  std::vector<int64_t> dims;
  int64_t elements = 0;
};

struct CheckpointSummary {
  std::string file;
  int64_t format_version = 0;
  // Version 2: the file's datasets and groups matched its /manifest on open (a mismatch is an Error instead).
  bool manifest_verified = false;
  std::map<std::string, int64_t> train_ints;
  std::optional<SaveLayout> layout;
  std::map<std::string, std::string> attributes;  // every root string attribute (config text included)
  std::vector<LayerSummary> layers;
  std::vector<ApplicationArraySummary> application;  // sorted by name
  std::vector<TensorSummary> samples;  // /samples/inputs, /samples/targets (held submitted samples), sorted
  // /normalization/<name> (inputs_mean, inputs_std, targets_mean, targets_std) with their values; empty when the
  // run normalized nothing. Values are those of a dataset whose checksum verified (else left empty).
  std::map<std::string, std::vector<float>> normalization;
  int64_t parameter_elements = 0;  // sum over /model
  int64_t datasets = 0;  // layer datasets, application arrays and held samples
  bool checksums_verified = false;
  std::string checksum_error;  // the first failure, naming file and dataset, when !checksums_verified
};

// Opens path (a directory means its latest checkpoint) in this process alone and checks every checksum.
// Error(kCheckpoint) if the file cannot be opened at all; a failed checksum is reported in the summary instead.
CheckpointSummary summarize(const std::string& path);

// Human-readable, several lines.
std::string summary_text(const CheckpointSummary& summary);
// One JSON object on one line (the config text is left out: it is long and available via h5dump).
std::string summary_json(const CheckpointSummary& summary);

}  // namespace sluice::checkpoint
