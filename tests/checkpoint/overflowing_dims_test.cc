// A checkpoint whose dataset dims multiply past 64 bits (a crafted or corrupt file): the element count used to
// wrap to a small number, the read buffer was sized by it and HDF5 then wrote the whole dataset past its end.
// Reading it must fail with kCheckpoint naming the overflow instead.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <string>

#include "checkpoint/format.h"
#include "checkpoint/reader.h"
#include "core/common/error.h"
#include "tests/checkpoint/checkpoint_test_support.h"

namespace sluice::checkpoint {
namespace {

using ::testing::HasSubstr;

// A file the Reader accepts (format_version 1, which has no manifest, and the four groups) with
// /model/layer_0000/weight of dims [dim, dim]: chunked and never written, so it takes no space on disk.
void write_file_with_huge_dataset(const std::string& file, hsize_t dim = hsize_t{1} << 40) {
  const hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t scalar = H5Screate(H5S_SCALAR);
  const hid_t version = H5Acreate2(f, kFormatVersionAttribute, H5T_STD_I64LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
  const int64_t one = 1;
  H5Awrite(version, H5T_NATIVE_INT64, &one);
  H5Aclose(version);
  for (const char* group : {kModelGroup, kOptimizerGroup, kAccumulationGroup, kTrainGroup}) {
    H5Gclose(H5Gcreate2(f, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  }
  const hid_t layer = H5Gcreate2(f, "/model/layer_0000", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t dims[2] = {dim, dim};
  const hsize_t chunk[2] = {1, 1024};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(create, 2, chunk);
  const hid_t dataset = H5Dcreate2(layer, "weight", H5T_IEEE_F32LE, space, H5P_DEFAULT, create, H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  H5Dclose(dataset);
  H5Pclose(create);
  H5Sclose(space);
  H5Sclose(scalar);
  H5Gclose(layer);
  H5Fclose(f);
}

TEST(OverflowingDims, ReadingADatasetWhoseCountWrapsIsACheckpointError) {
  const std::string file = testing::make_shared_temp_dir(MPI_COMM_SELF) + "/huge.h5";
  write_file_with_huge_dataset(file);
  const Reader reader(file);
  try {
    reader.read("/model/layer_0000/weight");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kCheckpoint) << error.what();
    EXPECT_THAT(error.what(), HasSubstr("checkpoint dataset element count: 1099511627776 × 1099511627776 overflows"));
  }
}

// Dims whose count fits 64 bits but not the file (2^20 x 2^20 floats: 4 TiB in a file of a few KB): refused before
// the reader allocates 4 TiB (found by the checkpoint fuzzer; it ended in an OOM kill or std::bad_alloc).
TEST(OverflowingDims, ReadingADatasetLargerThanItsFileIsACheckpointError) {
  const std::string file = testing::make_shared_temp_dir(MPI_COMM_SELF) + "/larger_than_file.h5";
  write_file_with_huge_dataset(file, hsize_t{1} << 20);
  const Reader reader(file);
  try {
    reader.read("/model/layer_0000/weight");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kCheckpoint) << error.what();
    EXPECT_THAT(error.what(), HasSubstr("dataset /model/layer_0000/weight"));
    EXPECT_THAT(error.what(), HasSubstr("its dims claim 4398046511104 bytes, more than the file's"));
  }
}

}  // namespace
}  // namespace sluice::checkpoint
