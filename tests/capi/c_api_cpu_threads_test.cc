// Under the C API Sluice leaves the host's BLAS thread count alone unless the config's cpu_threads says otherwise:
// the host program (a solver with its own threading) owns its threads.
#include <cblas.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sluice/sluice.h>

#include <string>

#include "tests/capi/run_test_support.h"

namespace {

std::string config_with(const std::string& extra) {
  return "model:\n  inputs: 4\n  layers:\n    - {type: linear, outputs: 8}\n    - {type: linear, outputs: 2}\n"
         "data: {type: external, batch: 4}\n" + extra;
}

// The BLAS thread count after a trainer with `extra` in its config has started, the host having set 3.
int threads_after_start(const std::string& extra) {
  openblas_set_num_threads(3);
  sluice_trainer* t = nullptr;
  EXPECT_EQ(sluice_trainer_create(MPI_COMM_WORLD, config_with(extra).c_str(), &t), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
  const int threads = openblas_get_num_threads();
  sluice_trainer_destroy(t);
  return threads;
}

TEST(CApiCpuThreads, TheHostsSettingIsKeptUnlessTheConfigSaysOtherwise) {
  EXPECT_EQ(threads_after_start(""), 3);                    // not given: keep
  EXPECT_EQ(threads_after_start("cpu_threads: keep\n"), 3);
  EXPECT_EQ(threads_after_start("cpu_threads: 2\n"), 2);
  EXPECT_GE(threads_after_start("cpu_threads: auto\n"), 1);  // the rule itself: tests/runtime:cpu_threads_test
}

TEST(CApiCpuThreads, ABadValueIsAConfigErrorNamingTheKey) {
  for (const char* bad : {"cpu_threads: 0\n", "cpu_threads: many\n", "cpu_threads: -1\n"}) {
    sluice_trainer* t = nullptr;
    EXPECT_EQ(sluice_trainer_create(MPI_COMM_WORLD, config_with(bad).c_str(), &t), SLUICE_ERROR_CONFIG) << bad;
    EXPECT_NE(std::string(sluice_last_error()).find("cpu_threads"), std::string::npos) << sluice_last_error();
  }
}

}  // namespace
