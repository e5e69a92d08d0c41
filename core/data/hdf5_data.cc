#include "core/data/hdf5_data.h"

#include <algorithm>
#include <filesystem>
#include <tuple>
#include <vector>

#include "core/common/error.h"
#include "core/common/hdf5_lock.h"
#include "core/common/message_text.h"
#include "core/common/non_finite.h"
#include "core/data/batch_arguments.h"
#include "core/data/field_box.h"
#include "core/data/hdf5_support.h"

namespace sluice::data {

namespace {

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* names) {
  static_cast<std::vector<std::string>*>(names)->push_back(name);
  return 0;
}

std::string list_root_names(hid_t file) {
  std::vector<std::string> names;
  H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &names);
  std::string listed;
  for (const std::string& name : names) listed += (listed.empty() ? "" : ", ") + name;
  return listed.empty() ? "none" : listed;
}

// "[32, 2, 64, 64]"
std::string extents_text(const std::vector<hsize_t>& extents) {
  std::string text = "[";
  for (size_t i = 0; i < extents.size(); ++i) text += (i ? ", " : "") + std::to_string(extents[i]);
  return text + "]";
}

}  // namespace

Hdf5Data::Hdf5Data(const std::string& path, const std::string& inputs_dataset, const std::string& targets_dataset,
                   int64_t global_batch, int64_t expected_input_features, int64_t expected_target_features)
    : path_(path), global_batch_(global_batch) {
  if (global_batch <= 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "Hdf5Data: global batch must be positive, got " + std::to_string(global_batch));
  }
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored)) {
    throw Error(ErrorCode::kIo, "hdf5 data: file \"" + shorten_for_message(path) + "\" does not exist (data.path)");
  }
  const Hdf5Lock lock;  // HDF5 is not thread-safe (core/common/hdf5_lock.h)
  SilenceHdf5Errors silence;
  if (H5Fis_hdf5(path.c_str()) <= 0) throw Error(ErrorCode::kIo, "hdf5 data: \"" + shorten_for_message(path) + "\" is not an HDF5 file");
  file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file_ < 0) throw Error(ErrorCode::kIo, "hdf5 data: cannot open \"" + shorten_for_message(path) + "\" for reading");
  try {
    inputs_ = open_dataset(inputs_dataset);
    targets_ = open_dataset(targets_dataset);
  } catch (...) {
    close();  // a throwing constructor gets no destructor call
    throw;
  }
  rows_in_file_ = inputs_.rows;
  input_features_ = inputs_.features;
  target_features_ = targets_.features;

  std::string problem;
  ErrorCode code = ErrorCode::kIo;
  if (targets_.rows != inputs_.rows) {
    problem = "dataset \"" + inputs_.name + "\" has " + std::to_string(inputs_.rows) + " rows but \"" + targets_.name +
              "\" has " + std::to_string(targets_.rows);
  } else if (expected_input_features >= 0 && input_features_ != expected_input_features) {
    code = ErrorCode::kConfig;
    problem = "dataset \"" + inputs_.name + "\" has " + std::to_string(input_features_) +
              " features per row but the model takes model.inputs = " + std::to_string(expected_input_features);
  } else if (expected_target_features >= 0 && target_features_ != expected_target_features) {
    code = ErrorCode::kConfig;
    problem = "dataset \"" + targets_.name + "\" has " + std::to_string(target_features_) +
              " features per row but the model outputs " + std::to_string(expected_target_features);
  }
  if (!problem.empty()) {
    close();
    throw Error(code, "hdf5 data \"" + shorten_for_message(path_) + "\": " + problem);
  }
}

Hdf5Data::~Hdf5Data() { close(); }

void Hdf5Data::close() {
  const Hdf5Lock lock;
  if (inputs_.id >= 0) H5Dclose(inputs_.id);
  if (targets_.id >= 0) H5Dclose(targets_.id);
  if (file_ >= 0) H5Fclose(file_);
  inputs_.id = targets_.id = file_ = -1;
}

Hdf5Data::Dataset Hdf5Data::open_dataset(const std::string& name) const {
  const std::string where = "hdf5 data \"" + shorten_for_message(path_) + "\", dataset \"" + name + "\": ";
  if (name.empty() || H5Lexists(file_, name.c_str(), H5P_DEFAULT) <= 0) {
    throw Error(ErrorCode::kIo, where + "not found (objects at the file's root: " + list_root_names(file_) + ")");
  }
  Dataset dataset;
  dataset.name = name;
  dataset.id = H5Dopen2(file_, name.c_str(), H5P_DEFAULT);
  if (dataset.id < 0) throw Error(ErrorCode::kIo, where + "is not a dataset");
  try {
    ScopedHid type(H5Dget_type(dataset.id), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_FLOAT) {
      throw Error(ErrorCode::kIo, where + "must hold floating-point numbers");
    }
    ScopedHid space(H5Dget_space(dataset.id), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 2 || rank > 5) {
      throw Error(ErrorCode::kIo, where + "must be [rows][features] or [rows, channels, extents..] (2 to 5 "
                                          "dimensions), but it has " + std::to_string(rank) + " dimensions");
    }
    std::vector<hsize_t> dims(static_cast<size_t>(rank));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    dataset.rows = static_cast<int64_t>(dims[0]);
    dataset.extents.assign(dims.begin() + 1, dims.end());
    dataset.start.assign(dataset.extents.size(), 0);
    dataset.count = dataset.extents;
    dataset.features = 1;
    for (hsize_t extent : dataset.extents) dataset.features *= static_cast<int64_t>(extent);
    if (dataset.rows == 0 || dataset.features == 0) {
      throw Error(ErrorCode::kIo, where + "is empty (shape " + extents_text(dims) + ")");
    }
  } catch (...) {
    H5Dclose(dataset.id);
    throw;
  }
  return dataset;
}

void Hdf5Data::read_rows(const Dataset& dataset, int64_t file_row, int64_t count, float* destination) const {
  // Rows file_row.. of the dataset, each only its selected hyperslab (the whole sample unless select_blocks).
  std::vector<hsize_t> start{static_cast<hsize_t>(file_row)}, shape{static_cast<hsize_t>(count)};
  start.insert(start.end(), dataset.start.begin(), dataset.start.end());
  shape.insert(shape.end(), dataset.count.begin(), dataset.count.end());
  const int rank = static_cast<int>(shape.size());
  ScopedHid memory(H5Screate_simple(rank, shape.data(), nullptr), H5Sclose);
  ScopedHid file_space(H5Dget_space(dataset.id), H5Sclose);
  SilenceHdf5Errors silence;
  // Reading as NATIVE_FLOAT lets HDF5 convert float64 datasets on the fly.
  if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, shape.data(), nullptr) < 0 ||
      H5Dread(dataset.id, H5T_NATIVE_FLOAT, memory.get(), file_space.get(), H5P_DEFAULT, destination) < 0) {
    throw Error(ErrorCode::kIo, "hdf5 data \"" + shorten_for_message(path_) + "\", dataset \"" + dataset.name +
                                    "\": reading rows " + std::to_string(file_row) + ".." +
                                    std::to_string(file_row + count - 1) + " failed");
  }
  // A NaN/Inf sample (or a float64 value beyond the float range, which the conversion makes inf) is refused here,
  // naming where it is in the file, rather than failing a later step with only a batch index.
  const int64_t i = first_non_finite_index(destination, count * dataset.features);
  if (i >= 0) {
    throw Error(ErrorCode::kIo, "hdf5 data \"" + shorten_for_message(path_) + "\", dataset \"" + dataset.name +
                                    "\": non-finite value (" + non_finite_text(destination[i]) + ") in " +
                                    non_finite_place(dataset, file_row, i));
  }
}

// "sample (row) 3, feature 2" for rows; "sample (row) 3, channel 1, point [4, 7]" for a field, the point's
// coordinates in the whole sample (a block's own are no use to whoever has to fix the file).
std::string Hdf5Data::non_finite_place(const Dataset& dataset, int64_t file_row, int64_t index) const {
  const std::string sample = "sample (row) " + std::to_string(file_row + index / dataset.features);
  int64_t rest = index % dataset.features;
  if (dataset.extents.size() < 2) return sample + ", feature " + std::to_string(rest);
  std::vector<hsize_t> at(dataset.count.size());
  for (size_t d = at.size(); d-- > 0;) {
    at[d] = dataset.start[d] + static_cast<hsize_t>(rest) % dataset.count[d];
    rest /= static_cast<int64_t>(dataset.count[d]);
  }
  return sample + ", channel " + std::to_string(at[0]) + ", point " +
         extents_text(std::vector<hsize_t>(at.begin() + 1, at.end()));
}

void Hdf5Data::select_block(Dataset& dataset, const config::DomainBox& box, const char* role) const {
  const std::string where = "hdf5 data \"" + shorten_for_message(path_) + "\", dataset \"" + dataset.name + "\"";
  if (dataset.extents.size() < 2) {
    throw Error(ErrorCode::kConfig, where + " is stored as [rows][features] (" + extents_text(dataset.extents) +
                                        " per sample); reading one block of each sample needs the samples' field "
                                        "shape: store it as [rows, channels, extents..]");
  }
  const config::SampleShape field(dataset.extents.begin(), dataset.extents.end());
  check_box(box, field, where + ", " + role + " block");
  dataset.start.assign(1, 0);
  dataset.count.assign(1, dataset.extents[0]);
  dataset.start.insert(dataset.start.end(), box.offset.begin(), box.offset.end());
  dataset.count.insert(dataset.count.end(), box.extent.begin(), box.extent.end());
  dataset.features = field[0] * box_points(box);
}

void Hdf5Data::select_blocks(const config::DomainBox& input_box, const config::DomainBox& target_box) {
  // Both checked before either changes: a refused target box leaves the source as it was.
  Dataset inputs = inputs_, targets = targets_;
  select_block(inputs, input_box, "input");
  select_block(targets, target_box, "target");
  inputs_ = inputs;
  targets_ = targets;
  input_features_ = inputs_.features;
  target_features_ = targets_.features;
}

void Hdf5Data::require_sample_shapes(const std::vector<int64_t>& input_shape,
                                     const std::vector<int64_t>& target_shape) {
  for (const auto& [dataset, shape, role] : {std::tuple{&inputs_, &input_shape, "takes"},
                                             std::tuple{&targets_, &target_shape, "outputs"}}) {
    const bool unknown = std::any_of(shape->begin(), shape->end(), [](int64_t e) { return e < 0; });
    if (dataset->extents.size() < 2 || shape->size() < 2 || unknown) continue;
    const std::vector<hsize_t> wanted(shape->begin(), shape->end());
    if (dataset->extents != wanted) {
      throw Error(ErrorCode::kConfig, "hdf5 data \"" + shorten_for_message(path_) + "\": dataset \"" + dataset->name +
                                          "\" holds samples of shape " + extents_text(dataset->extents) +
                                          " but the model " + role + " fields of shape " + extents_text(wanted));
    }
  }
}

void Hdf5Data::batch(int64_t step, int64_t first_row, int64_t rows, float* inputs, float* targets) {
  if (!check_batch_arguments("Hdf5Data::batch", step, first_row, rows, inputs, targets)) return;
  const Hdf5Lock lock;
  const int64_t n = rows_in_file_;
  // (step * batch + first_row) mod N without overflowing for large step counts.
  int64_t file_row = ((step % n) * (global_batch_ % n) % n + first_row % n) % n;
  int64_t done = 0;
  while (done < rows) {
    // Contiguous up to the end of the file, then wrap to row 0.
    const int64_t count = std::min(rows - done, n - file_row);
    read_rows(inputs_, file_row, count, inputs + done * input_features_);
    read_rows(targets_, file_row, count, targets + done * target_features_);
    done += count;
    file_row = 0;
  }
}

}  // namespace sluice::data
