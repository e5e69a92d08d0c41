// A gtest fixture for tests of the agreement protocol on real MPI ranks: each test gets its own duplicate of
// MPI_COMM_WORLD (errors returned, not fatal), so agreement sequence numbers and stray messages never leak from one
// test into the next.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

namespace sluice::testing {

class FreshCommTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }
  void TearDown() override { MPI_Comm_free(&comm_); }
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace sluice::testing
