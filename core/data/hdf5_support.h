// Small RAII helpers for the HDF5 readers of core/data (training data, normalization statistics).
#pragma once

#include <hdf5.h>

namespace sluice::data {

// Our checks produce the error messages; HDF5's own stack dump to stderr would only bury them.
class SilenceHdf5Errors {
 public:
  SilenceHdf5Errors() {
    H5Eget_auto2(H5E_DEFAULT, &previous_, &previous_data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~SilenceHdf5Errors() { H5Eset_auto2(H5E_DEFAULT, previous_, previous_data_); }
  SilenceHdf5Errors(const SilenceHdf5Errors&) = delete;
  SilenceHdf5Errors& operator=(const SilenceHdf5Errors&) = delete;

 private:
  H5E_auto2_t previous_ = nullptr;
  void* previous_data_ = nullptr;
};

// Closes an HDF5 handle (file, dataset, dataspace, type) at scope exit.
class ScopedHid {
 public:
  ScopedHid(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~ScopedHid() {
    if (id_ >= 0) close_(id_);
  }
  ScopedHid(const ScopedHid&) = delete;
  ScopedHid& operator=(const ScopedHid&) = delete;
  hid_t get() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

}  // namespace sluice::data
