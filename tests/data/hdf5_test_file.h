// Writing small HDF5 files in the tests of core/data.
#pragma once

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace sluice::data::test_hdf5 {

inline std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

inline void write_dataset(hid_t file, const std::string& name, hid_t type, const std::vector<hsize_t>& dims,
                          const void* values) {
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t dataset = H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(dataset, 0) << name;
  ASSERT_GE(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), 0) << name;
  H5Dclose(dataset);
  H5Sclose(space);
}

}  // namespace sluice::data::test_hdf5
