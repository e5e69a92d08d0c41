#include "core/runtime/sample_checkpoint.h"

#include <algorithm>
#include <string>

#include "checkpoint/format.h"
#include "checkpoint/layer_paths.h"
#include "core/common/error.h"
#include "core/common/log.h"
#include "core/common/message_text.h"
#include "core/common/non_finite.h"

namespace sluice::runtime {
namespace {

int64_t train_int_or_zero(const checkpoint::Reader& reader, const char* name) {
  const auto found = reader.train_ints().find(name);
  return found == reader.train_ints().end() ? 0 : found->second;
}

// The dataset shape of `held` samples of `features` each: [held, C, D..] when `shape` is a field of that many
// features, else [held, features].
std::vector<int64_t> side_dims(int64_t held, int64_t features, const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t d : shape) count = d > 0 ? count * d : -1;
  if (shape.size() < 2 || count != features) return {held, features};
  std::vector<int64_t> dims{held};
  dims.insert(dims.end(), shape.begin(), shape.end());
  return dims;
}

// One side of the stored samples, with its shape checked: the field's [held, C, D..] or the 2-D [held, features]
// of older files (the same values in the same order).
std::vector<float> read_side(const checkpoint::Reader& reader, const char* name, int64_t held, int64_t features,
                             const std::vector<int64_t>& shape) {
  const std::string path = checkpoint::samples_path(name);
  const std::vector<int64_t> dims = side_dims(held, features, shape);
  std::vector<float> values = reader.contains(path) && reader.dims(path) == dims
                                  ? reader.read(path).data
                                  : reader.read(path, {held, features}).data;
  // A held sample that is not finite would fail every training call that draws it: refused here, as at submit.
  const std::string problem = first_non_finite(values.data(), held, features, name);
  if (!problem.empty()) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "', dataset " + path + ": " + problem);
  }
  return values;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

// Throws Error(kInternal) unless `box` is a block of one sample `whole` ([C, D..]) holding `features` values, as the
// store keeps it: the save and the load both cut a side by that box.
void check_block_of_store(const std::string& where, const std::vector<int64_t>& whole, const config::DomainBox& box,
                          int64_t features) {
  int64_t block_features = whole.empty() ? 0 : whole.front();
  for (int64_t e : box.extent) block_features *= e;
  if (box.offset.size() + 1 != whole.size() || box.extent.size() + 1 != whole.size() || block_features != features) {
    throw Error(ErrorCode::kInternal, where + ": the block " + dims_text(box.offset) + " + " + dims_text(box.extent) +
                                          " of " + dims_text(whole) + " is not the store's " +
                                          std::to_string(features) + " values per sample");
  }
}

// One side's block of every held sample: the hyperslab [held, all C, box] of the stored [held, C, D..] whole samples
// (`whole` is one sample's [C, D..], `features` the block's values per sample, as the store keeps them).
std::vector<float> read_side_block(const checkpoint::Reader& reader, const char* name, int64_t held, int64_t features,
                                   const std::vector<int64_t>& whole, const config::DomainBox& box) {
  const std::string path = checkpoint::samples_path(name);
  const std::string where = "checkpoint '" + reader.file() + "', dataset " + path;
  std::vector<int64_t> expected{held};
  expected.insert(expected.end(), whole.begin(), whole.end());
  const std::vector<int64_t>& stored = reader.dims(path);  // kCheckpoint naming it when missing
  if (stored != expected) {
    int64_t whole_features = 1;
    for (int64_t d : whole) whole_features *= d;
    if (stored == std::vector<int64_t>{held, whole_features}) {
      throw Error(ErrorCode::kUnsupported,
                  where + " is stored " + dims_text(stored) + " (rows, an older format): a block of each sample "
                  "is read on a pipeline.domain split only from [held, C, D..] " + dims_text(expected) +
                  "; load it undecomposed and save it again");
    }
    throw Error(ErrorCode::kCheckpoint,
                where + ": shape mismatch: file has " + dims_text(stored) + ", expected " + dims_text(expected));
  }
  std::vector<int64_t> offset{0, 0}, extent{held, whole.front()};
  offset.insert(offset.end(), box.offset.begin(), box.offset.end());
  extent.insert(extent.end(), box.extent.begin(), box.extent.end());
  check_block_of_store(where, whole, box, features);
  std::vector<float> values(static_cast<size_t>(held * features));
  reader.read_box_into(path, offset, extent, values.data(), values.size());
  const std::string problem = first_non_finite(values.data(), held, features, name);
  if (!problem.empty()) throw Error(ErrorCode::kCheckpoint, where + ": " + problem + " of this rank's block");
  return values;
}

// One side's entry: the whole samples, or on a split (`whole` and `box` given) this rank's block of the whole
// [held, C, D..] dataset, `whole` being one sample's [C, D..] and `box` the side's block of its spatial extents.
checkpoint::Entry side_entry(const char* name, int64_t held, int64_t features, const std::vector<int64_t>& shape,
                             const std::vector<int64_t>* whole, const config::DomainBox* box,
                             std::vector<float> values) {
  const std::string path = checkpoint::samples_path(name);
  if (whole == nullptr || box == nullptr) return {path, side_dims(held, features, shape), std::move(values)};
  check_block_of_store("cannot save " + path + " on a pipeline.domain split", *whole, *box, features);
  std::vector<int64_t> dims{held, whole->front()};
  dims.insert(dims.end(), box->extent.begin(), box->extent.end());
  checkpoint::Entry entry{path, std::move(dims), std::move(values)};
  entry.global_dims = {held};
  entry.global_dims.insert(entry.global_dims.end(), whole->begin(), whole->end());
  entry.box_offset = {0, 0};
  entry.box_offset.insert(entry.box_offset.end(), box->offset.begin(), box->offset.end());
  return entry;
}

}  // namespace

void add_sample_entries(const SampleStore& store, int replica, checkpoint::Snapshot& snapshot,
                        const std::vector<int64_t>& input_shape, const std::vector<int64_t>& output_shape,
                        config::CheckpointSamples choice, const HeldSampleBlock* block) {
  if (choice == config::CheckpointSamples::kDrop) {
    snapshot.train_ints[checkpoint::kSamplesHeldDataset] = 0;
    snapshot.train_ints[checkpoint::kSamplesDrawsDataset] = static_cast<int64_t>(store.draws());
    return;
  }
  snapshot.train_ints[checkpoint::kSamplesHeldDataset] = store.held();
  snapshot.train_ints[checkpoint::kSamplesDrawsDataset] = static_cast<int64_t>(store.draws());
  // A dataset of zero samples is not written: held = 0 says there is nothing to read.
  if (replica != 0 || store.held() == 0) return;
  // On a split every block of replica 0 writes its box (save() checks that the boxes tile each dataset).
  if (store.keeps_inputs()) {
    snapshot.entries.push_back(side_entry(checkpoint::kSamplesInputsDataset, store.held(), store.input_features(),
                                          input_shape, block ? &block->input_shape : nullptr,
                                          block ? &block->input_box : nullptr, store.inputs_in_order()));
  }
  if (store.keeps_targets()) {
    snapshot.entries.push_back(side_entry(checkpoint::kSamplesTargetsDataset, store.held(), store.output_features(),
                                          output_shape, block ? &block->output_shape : nullptr,
                                          block ? &block->output_box : nullptr, store.targets_in_order()));
  }
}

StagedSamples stage_samples(const checkpoint::Reader& reader, const SampleStore& store,
                            const std::vector<int64_t>& input_shape, const std::vector<int64_t>& output_shape,
                            const HeldSampleBlock* block) {
  StagedSamples staged;
  staged.held = train_int_or_zero(reader, checkpoint::kSamplesHeldDataset);
  staged.draws = static_cast<uint64_t>(train_int_or_zero(reader, checkpoint::kSamplesDrawsDataset));
  const std::string where = "checkpoint '" + reader.file() + "', /train/" + checkpoint::kSamplesHeldDataset;
  if (staged.held < 0) throw Error(ErrorCode::kCheckpoint, where + " is negative");
  if (store.replay() && staged.held > store.capacity()) {
    throw Error(ErrorCode::kCheckpoint, where + ": holds " + std::to_string(staged.held) +
                                            " submitted samples but data.replay.capacity is " +
                                            std::to_string(store.capacity()));
  }
  if (staged.held == 0) return staged;
  if (block != nullptr) {
    if (store.keeps_inputs()) {
      staged.inputs = read_side_block(reader, checkpoint::kSamplesInputsDataset, staged.held, store.input_features(),
                                      block->input_shape, block->input_box);
    }
    if (store.keeps_targets()) {
      staged.targets = read_side_block(reader, checkpoint::kSamplesTargetsDataset, staged.held,
                                       store.output_features(), block->output_shape, block->output_box);
    }
    return staged;
  }
  if (store.keeps_inputs()) {
    staged.inputs = read_side(reader, checkpoint::kSamplesInputsDataset, staged.held, store.input_features(),
                               input_shape);
  }
  if (store.keeps_targets()) {
    staged.targets = read_side(reader, checkpoint::kSamplesTargetsDataset, staged.held, store.output_features(),
                                output_shape);
  }
  return staged;
}

void log_dropped_samples(config::CheckpointSamples choice, const StagedSamples& staged, const std::string& file,
                         int world_rank) {
  if (choice != config::CheckpointSamples::kDrop || staged.held != 0 || world_rank != 0) return;
  log::warning("resumed from checkpoint '" + shorten_for_message(file) +
               "' with an empty sample store: checkpoint.samples is drop, so checkpoints do not carry the submitted "
               "samples (submit new ones before sluice_train_submitted)");
}

}  // namespace sluice::runtime
