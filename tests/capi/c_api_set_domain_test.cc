// sluice_trainer_set_domain's argument checks (one rank; the cross-rank checks at start are
// tests/runtime:declared_domain_test's): every bad argument is refused with INVALID_ARGUMENT naming it and its
// dimension, a declaration after start with STATE, and a good one (also declared twice) is accepted.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sluice/sluice.h>

#include <cstdint>
#include <string>

namespace {

// A 2-D field [1, 16, 12] (C order: 16 rows of 12 points, the last fastest).
const char* const kFieldConfig = R"(model:
  inputs: [1, 16, 12]
  layers:
    - {type: conv, channels: 2, kernel: 3, padding: periodic}
    - {type: pool, kernel: 2, mode: max}
    - {type: upsample, factor: 2}
    - {type: conv, channels: 1, kernel: 1}
pipeline: {stages: 1, microbatches: 1}
data: {type: external, batch: 2}
)";

const char* const kRowsConfig = R"(model:
  inputs: 4
  layers: [{type: linear, outputs: 2}]
pipeline: {stages: 1, microbatches: 1}
data: {type: external, batch: 2}
)";

class SetDomain : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sluice_trainer_create(MPI_COMM_WORLD, kFieldConfig, &t_), SLUICE_OK) << sluice_last_error();
  }
  void TearDown() override { sluice_trainer_destroy(t_); }

  // The call's status is `status` and its message holds `fragment`.
  static void expect(sluice_status got, sluice_status status, const std::string& fragment) {
    const std::string message = sluice_last_error();
    EXPECT_EQ(got, status) << sluice_status_string(got) << ": " << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << "\"" << message << "\" lacks \"" << fragment << "\"";
  }

  sluice_trainer* t_ = nullptr;
  const int64_t global_[2] = {16, 12};
  const int64_t offset_[2] = {6, 4};
  const int64_t extent_[2] = {10, 8};
};

TEST_F(SetDomain, AcceptsABlockOfTheModelsFieldAndAnotherDeclarationReplacesIt) {
  EXPECT_EQ(sluice_trainer_set_domain(t_, 2, global_, offset_, extent_), SLUICE_OK) << sluice_last_error();
  const int64_t whole_offset[2] = {0, 0};
  EXPECT_EQ(sluice_trainer_set_domain(t_, 2, global_, whole_offset, global_), SLUICE_OK) << sluice_last_error();
}

TEST_F(SetDomain, RefusesNullArraysByName) {
  expect(sluice_trainer_set_domain(nullptr, 2, global_, offset_, extent_), SLUICE_ERROR_INVALID_ARGUMENT,
         "trainer handle is NULL");
  expect(sluice_trainer_set_domain(t_, 2, nullptr, offset_, extent_), SLUICE_ERROR_INVALID_ARGUMENT,
         "global_extent (const int64_t*) is NULL");
  expect(sluice_trainer_set_domain(t_, 2, global_, nullptr, extent_), SLUICE_ERROR_INVALID_ARGUMENT,
         "block_offset (const int64_t*) is NULL");
  expect(sluice_trainer_set_domain(t_, 2, global_, offset_, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
         "block_extent (const int64_t*) is NULL");
}

TEST_F(SetDomain, RefusesAnotherDimensionCountThanTheModelsField) {
  const int64_t three[3] = {16, 12, 1};
  expect(sluice_trainer_set_domain(t_, 3, three, three, three), SLUICE_ERROR_INVALID_ARGUMENT,
         "ndims 3 is not the number of spatial dimensions of the model's input (model.inputs has 2");
  expect(sluice_trainer_set_domain(t_, 0, global_, offset_, extent_), SLUICE_ERROR_INVALID_ARGUMENT, "ndims 0");
}

TEST_F(SetDomain, RefusesAGlobalExtentOtherThanTheModelsField) {
  const int64_t other[2] = {16, 14};
  expect(sluice_trainer_set_domain(t_, 2, other, offset_, extent_), SLUICE_ERROR_INVALID_ARGUMENT,
         "global_extent [16, 14] is not the model's input field [16, 12]");
}

TEST_F(SetDomain, RefusesExtentsAndOffsetsOutsideTheFieldNamingTheDimension) {
  const int64_t zero_extent[2] = {10, 0};
  expect(sluice_trainer_set_domain(t_, 2, global_, offset_, zero_extent), SLUICE_ERROR_INVALID_ARGUMENT,
         "block_extent 0 in spatial dimension 2 (must be positive)");
  const int64_t negative_extent[2] = {-1, 8};
  expect(sluice_trainer_set_domain(t_, 2, global_, offset_, negative_extent), SLUICE_ERROR_INVALID_ARGUMENT,
         "block_extent -1 in spatial dimension 1");
  const int64_t negative_offset[2] = {-2, 4};
  expect(sluice_trainer_set_domain(t_, 2, global_, negative_offset, extent_), SLUICE_ERROR_INVALID_ARGUMENT,
         "block_offset -2 in spatial dimension 1 (must be 0 or more)");
  const int64_t far_offset[2] = {8, 4};
  expect(sluice_trainer_set_domain(t_, 2, global_, far_offset, extent_), SLUICE_ERROR_INVALID_ARGUMENT,
         "block_offset 8 + block_extent 10 in spatial dimension 1 reaches past the field's 16 points there");
}

TEST_F(SetDomain, RefusesAModelOnRows) {
  sluice_trainer* rows = nullptr;
  ASSERT_EQ(sluice_trainer_create(MPI_COMM_WORLD, kRowsConfig, &rows), SLUICE_OK) << sluice_last_error();
  expect(sluice_trainer_set_domain(rows, 1, global_, offset_, extent_), SLUICE_ERROR_INVALID_ARGUMENT,
         "the model's input (model.inputs) is rows of 4 features, not a field");
  sluice_trainer_destroy(rows);
}

TEST_F(SetDomain, RefusesADeclarationAfterStart) {
  ASSERT_EQ(sluice_trainer_start(t_), SLUICE_OK) << sluice_last_error();
  expect(sluice_trainer_set_domain(t_, 2, global_, offset_, extent_), SLUICE_ERROR_STATE,
         "declare the domain before sluice_trainer_start");
}

}  // namespace
