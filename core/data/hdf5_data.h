// Training data from an HDF5 file holding two float datasets, inputs [N][in] and targets [N][out], or N-D ones
// [N, C, D1[, D2[, D3]]] for fields (C order, the layout of the model's field samples).
// Step k, row r of the global batch reads file row (k * global_batch + r) mod N, so epochs wrap around the
// file and any rank can read any slice. Each rank opens the file independently with serial (default) access;
// the parallel HDF5 build needs no MPI_Init for that. A source may read one block of every field sample instead of the
// whole sample (select_blocks): a hyperslab of the N-D dataset, so no rank reads or holds more than its block.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/domain_layout.h"
#include "core/data/data_source.h"

namespace sluice::data {

class Hdf5Data : public DataSource {
 public:
  // expected_input_features / expected_target_features: what the model needs; -1 accepts the file's width.
  // Throws sluice::Error naming the file and dataset: kIo when the file or a dataset is missing, is not 2-D,
  // holds no floats, or the datasets disagree on N; kConfig when a width differs from the model's.
  Hdf5Data(const std::string& path, const std::string& inputs_dataset, const std::string& targets_dataset,
           int64_t global_batch, int64_t expected_input_features, int64_t expected_target_features);
  ~Hdf5Data() override;
  Hdf5Data(const Hdf5Data&) = delete;
  Hdf5Data& operator=(const Hdf5Data&) = delete;

  void batch(int64_t step, int64_t first_row, int64_t rows, float* inputs, float* targets) override;
  int64_t input_features() const override { return input_features_; }
  int64_t target_features() const override { return target_features_; }
  int64_t rows_in_file() const { return rows_in_file_; }
  // A dataset of more than 2 dimensions must hold exactly these samples: [C, D..] (the model's input or output
  // field; rows [F] accept any dataset of F values per sample). An empty shape or one with an unknown (negative)
  // extent checks nothing. Throws Error(kConfig) naming the dataset and both shapes.
  void require_sample_shapes(const std::vector<int64_t>& input_shape, const std::vector<int64_t>& target_shape);
  // From now on reads only `input_box` of every input sample and `target_box` of every target sample (all channels;
  // per spatial dimension offset and extent in the dataset's own field, core/data/field_box.h): batch() then fills
  // rows of [C][box extents], and input_features() / target_features() are the blocks' values. Non-finite values are
  // named at their GLOBAL point. Throws Error(kConfig) naming the dataset when it is stored as [rows][features] (a
  // block needs [rows, C, D..]), Error(kInvalidArgument) when a box does not fit the dataset's field.
  void select_blocks(const config::DomainBox& input_box, const config::DomainBox& target_box);

 private:
  struct Dataset {
    hid_t id = -1;
    std::string name;
    int64_t rows = 0;
    int64_t features = 0;
    std::vector<hsize_t> extents;  // per sample: the dimensions after the first
    std::vector<hsize_t> start;    // per sample, the hyperslab read: from `start`, `count` (all of it by default)
    std::vector<hsize_t> count;
  };
  void select_block(Dataset& dataset, const config::DomainBox& box, const char* role) const;
  std::string non_finite_place(const Dataset& dataset, int64_t file_row, int64_t index) const;
  Dataset open_dataset(const std::string& name) const;
  void close();
  void read_rows(const Dataset& dataset, int64_t file_row, int64_t count, float* destination) const;

  std::string path_;
  int64_t global_batch_;
  hid_t file_ = -1;
  Dataset inputs_;
  Dataset targets_;
  int64_t rows_in_file_ = 0;
  int64_t input_features_ = 0;
  int64_t target_features_ = 0;
};

}  // namespace sluice::data
