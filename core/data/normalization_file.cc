#include "core/data/normalization_file.h"

#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/common/hdf5_lock.h"
#include "core/common/message_text.h"
#include "core/data/hdf5_support.h"

namespace sluice::data {
namespace {

std::string where(const std::string& path, const std::string& dataset) {
  return "normalization.file \"" + shorten_for_message(path) + "\", dataset " + dataset;
}

// One statistic: a numeric dataset of shape [n] or [1][n] (or [n][1]), converted to double by HDF5.
std::vector<double> read_statistic(hid_t file, const std::string& path, const std::string& name, bool positive) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) {
    throw Error(ErrorCode::kConfig, "config: " + where(path, name) + ": missing (a given side needs its mean and std)");
  }
  const ScopedHid dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  const ScopedHid type(dataset.get() >= 0 ? H5Dget_type(dataset.get()) : -1, H5Tclose);
  const H5T_class_t type_class = type.get() >= 0 ? H5Tget_class(type.get()) : H5T_NO_CLASS;
  if (type_class != H5T_FLOAT && type_class != H5T_INTEGER) {
    throw Error(ErrorCode::kConfig, "config: " + where(path, name) + ": not a numeric dataset");
  }
  const ScopedHid space(H5Dget_space(dataset.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  hsize_t dims[2] = {0, 0};
  if (rank < 1 || rank > 2) throw Error(ErrorCode::kConfig, "config: " + where(path, name) + ": not 1-D");
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  if (rank == 2 && dims[0] != 1 && dims[1] != 1) {
    throw Error(ErrorCode::kConfig, "config: " + where(path, name) + ": has shape [" + std::to_string(dims[0]) +
                                        ", " + std::to_string(dims[1]) + "], expected one value per feature (1-D)");
  }
  std::vector<double> values(static_cast<size_t>(rank == 1 ? dims[0] : dims[0] * dims[1]));
  if (!values.empty() &&
      H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) {
    throw Error(ErrorCode::kIo, where(path, name) + ": read failed");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]) || (positive && !(values[i] > 0.0))) {
      throw Error(ErrorCode::kConfig, "config: " + where(path, name) + ": entry " + std::to_string(i) + " is " +
                                          std::to_string(values[i]) + ", expected a finite" +
                                          (positive ? " positive" : "") + " number");
    }
  }
  return values;
}

void fill_side(hid_t file, const std::string& path, const std::string& side, config::NormalizationSide& values) {
  if (values.mode != config::NormalizationMode::kGiven || !values.mean.empty()) return;
  values.mean = read_statistic(file, path, side + "_mean", false);
  values.std = read_statistic(file, path, side + "_std", true);
}

}  // namespace

config::NormalizationSpec with_file_statistics(const config::NormalizationSpec& spec) {
  config::NormalizationSpec filled = spec;
  if (spec.file.empty()) return filled;
  const std::string& path = spec.file;
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored)) {
    throw Error(ErrorCode::kIo, "normalization.file \"" + shorten_for_message(path) + "\" does not exist");
  }
  const Hdf5Lock lock;  // HDF5 is not thread-safe (core/common/hdf5_lock.h)
  const SilenceHdf5Errors silence;
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    throw Error(ErrorCode::kIo, "normalization.file \"" + shorten_for_message(path) + "\" is not an HDF5 file");
  }
  const ScopedHid file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file.get() < 0) {
    throw Error(ErrorCode::kIo, "normalization.file \"" + shorten_for_message(path) + "\" cannot be opened");
  }
  fill_side(file.get(), path, "inputs", filled.inputs);
  fill_side(file.get(), path, "targets", filled.targets);
  return filled;
}

}  // namespace sluice::data
