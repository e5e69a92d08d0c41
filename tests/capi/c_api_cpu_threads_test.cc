// Under the C API Sluice leaves the host's BLAS thread count alone unless the config's cpu_threads says otherwise:
// the host program (a solver with its own threading) owns its threads.
#include <cblas.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sched.h>
#include <sluice/sluice.h>

#include <string>

#include "tests/capi/run_test_support.h"

namespace {

std::string config_with(const std::string& extra) {
  return "model:\n  inputs: 4\n  layers:\n    - {type: linear, outputs: 8}\n    - {type: linear, outputs: 2}\n"
         "data: {type: external, batch: 4}\n" + extra;
}

// The cores in this rank's affinity mask (mpirun binds a rank to one core by default).
int cores_in_mask() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  EXPECT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  return CPU_COUNT(&mask);
}

// What the host sets before each start: never a count the config's could coincide with.
int host_threads() { return cores_in_mask() + 2; }

// The BLAS thread count after a trainer with `extra` in its config has started, the host having set its own.
int threads_after_start(const std::string& extra) {
  openblas_set_num_threads(host_threads());
  sluice_trainer* t = nullptr;
  EXPECT_EQ(sluice_trainer_create(MPI_COMM_WORLD, config_with(extra).c_str(), &t), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
  const int threads = openblas_get_num_threads();
  sluice_trainer_destroy(t);
  return threads;
}

TEST(CApiCpuThreads, TheHostsSettingIsKeptUnlessTheConfigSaysOtherwise) {
  EXPECT_EQ(threads_after_start(""), host_threads());  // not given: keep
  EXPECT_EQ(threads_after_start("cpu_threads: keep\n"), host_threads());
  const int cores = cores_in_mask();
  EXPECT_EQ(threads_after_start("cpu_threads: " + std::to_string(cores) + "\n"), cores);
  EXPECT_GE(threads_after_start("cpu_threads: auto\n"), 1);  // the rule itself: tests/runtime:cpu_threads_test
}

TEST(CApiCpuThreads, ABadValueIsAConfigErrorNamingTheKey) {
  for (const char* bad : {"cpu_threads: 0\n", "cpu_threads: many\n", "cpu_threads: -1\n"}) {
    sluice_trainer* t = nullptr;
    EXPECT_EQ(sluice_trainer_create(MPI_COMM_WORLD, config_with(bad).c_str(), &t), SLUICE_ERROR_CONFIG) << bad;
    EXPECT_NE(std::string(sluice_last_error()).find("cpu_threads"), std::string::npos) << sluice_last_error();
  }
}

// More threads than the rank's cores would only fight each other (and >= 32 under an address-space limit hung
// at exit inside OpenBLAS, issue 28): refused at start, naming the value, the key and the count.
TEST(CApiCpuThreads, MoreThreadsThanTheRanksCoresIsAConfigError) {
  const int cores = cores_in_mask();
  for (const int count : {cores + 1, 64}) {
    openblas_set_num_threads(host_threads());
    sluice_trainer* t = nullptr;
    ASSERT_EQ(sluice_trainer_create(MPI_COMM_WORLD, config_with("cpu_threads: " + std::to_string(count) + "\n").c_str(),
                                    &t),
              SLUICE_OK)
        << sluice_last_error();
    EXPECT_EQ(sluice_trainer_start(t), SLUICE_ERROR_CONFIG) << count;
    EXPECT_NE(std::string(sluice_last_error())
                  .find("cpu_threads " + std::to_string(count) + " is more than the " + std::to_string(cores) +
                        " core(s) in this rank's affinity mask"),
              std::string::npos)
        << sluice_last_error();
    EXPECT_EQ(openblas_get_num_threads(), host_threads()) << "a refused count must not be applied";
    sluice_trainer_destroy(t);
  }
}

}  // namespace
