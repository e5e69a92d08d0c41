// Shared by the C API tests of the application's loop (run control, application state, checkpoints, ...): a status
// assertion that prints the library's message, a started trainer, and a per-test checkpoint directory every rank
// names alike.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>
#include <sluice/sluice.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/mpi_world.h"

#define ASSERT_SLUICE_OK(call) ASSERT_EQ((call), SLUICE_OK) << #call << ": " << sluice_last_error()

namespace sluice::testing {

// A trainer created on MPI_COMM_WORLD from `yaml` and started. A failure is a test failure with the library's
// message (the handle may then be null: the library refuses null handles with INVALID_ARGUMENT).
inline sluice_trainer* started_trainer(const std::string& yaml) {
  sluice_trainer* t = nullptr;
  EXPECT_EQ(sluice_trainer_create(MPI_COMM_WORLD, yaml.c_str(), &t), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
  return t;
}

// A directory every rank names alike, empty at the start of each test (rank 0 clears it).
inline std::string fresh_dir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp ? tmp : "/tmp") + "/" + name;
  if (world_rank() == 0) std::filesystem::remove_all(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  return dir;
}

}  // namespace sluice::testing
