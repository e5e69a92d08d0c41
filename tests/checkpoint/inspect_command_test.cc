// `sluice inspect` on a real checkpoint: text and --json reports, and a corrupted file ending in kCheckpoint after
// the report. Rank 0 inspects; the checkpoint itself is saved by all ranks.
#include "tools/sluice/inspect_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <filesystem>

#include "checkpoint/directory.h"
#include "checkpoint/layer_paths.h"
#include "checkpoint/save.h"
#include "checkpoint/save_layout.h"
#include "core/common/error.h"
#include "tests/checkpoint/checkpoint_test_support.h"

namespace sluice::checkpoint {
namespace {

using ::testing::HasSubstr;

constexpr int kLayers = 3;

class InspectCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    dir_ = testing::make_shared_temp_dir(MPI_COMM_WORLD);
    file_ = dir_ + "/" + checkpoint_file_name(10);
    Snapshot mine = testing::synthetic_snapshot(kLayers, size_, rank_);
    if (rank_ == 0) {
      mine.train_ints = {{"step", 10}, {"seed", 3}};
      mine.attributes = {{"created_by", "inspect \"test\""}};
      add_layout_attributes({2, 1, 1, 2, "gpipe"}, mine.attributes);
    }
    save(MPI_COMM_WORLD, file_, mine);
  }
  void TearDown() override {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank_ == 0) std::filesystem::remove_all(dir_);
  }

  // Runs `inspect args...` as the sluice binary would and returns what it printed.
  std::string run_inspect(std::vector<std::string> args) {
    CLI::App app;
    tools::register_inspect_command(app);
    args.insert(args.begin(), "inspect");
    std::reverse(args.begin(), args.end());  // CLI11 takes the vector form in reverse order
    ::testing::internal::CaptureStdout();
    try {
      app.parse(args);
    } catch (...) {
      printed_ = ::testing::internal::GetCapturedStdout();
      throw;
    }
    printed_ = ::testing::internal::GetCapturedStdout();
    return printed_;
  }

  int rank_ = 0;
  int size_ = 1;
  std::string dir_;
  std::string file_;
  std::string printed_;
};

TEST_F(InspectCommandTest, TextReportShowsStepLayoutLayersAndChecksums) {
  if (rank_ != 0) return;
  const std::string report = run_inspect({dir_});  // a directory means its latest checkpoint
  EXPECT_THAT(report, HasSubstr(file_));
  EXPECT_THAT(report, HasSubstr("step:            10"));
  EXPECT_THAT(report, HasSubstr("stages=2 data_parallel=1 chunks=1 world=2 schedule=gpipe"));
  // 3 layers of weight [3, 4] and bias [4]: 3 * (12 + 4) = 48 parameters, 3 tensors per layer with exp_avg.
  EXPECT_THAT(report, HasSubstr("layers:          3 (48 parameters, 9 datasets)"));
  EXPECT_THAT(report, HasSubstr("layer_0002: 16 parameters: bias [4], weight [3, 4]; optimizer: weight/exp_avg [3, 4]"));
  EXPECT_THAT(report, HasSubstr("checksums:       all 9 verified"));
}

TEST_F(InspectCommandTest, JsonReportIsOneObject) {
  if (rank_ != 0) return;
  const std::string report = run_inspect({file_, "--json"});
  EXPECT_EQ(report.front(), '{');
  EXPECT_EQ(report.find('\n'), report.size() - 1) << "one line";
  EXPECT_THAT(report, HasSubstr("\"step\":10"));
  EXPECT_THAT(report, HasSubstr("\"train\":{\"seed\":3,\"step\":10}"));
  EXPECT_THAT(report, HasSubstr("\"layout\":{\"stages\":2,\"data_parallel\":1,\"chunks\":1,\"world\":2,\"schedule\":\"gpipe\"}"));
  EXPECT_THAT(report, HasSubstr("\"created_by\":\"inspect \\\"test\\\"\""));
  EXPECT_THAT(report, HasSubstr("{\"index\":1,\"parameters\":[{\"name\":\"bias\",\"dims\":[4],\"elements\":4},"));
  EXPECT_THAT(report, HasSubstr("\"parameter_elements\":48"));
  EXPECT_THAT(report, HasSubstr("\"checksums_verified\":true"));
}

TEST_F(InspectCommandTest, CorruptedFileIsReportedThenThrowsNamingFileAndDataset) {
  if (rank_ != 0) return;
  const std::string victim = optimizer_path(2, "weight", "exp_avg");
  {
    const hid_t handle = H5Fopen(file_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t dataset = H5Dopen2(handle, victim.c_str(), H5P_DEFAULT);
    const haddr_t offset = H5Dget_offset(dataset);
    H5Dclose(dataset);
    H5Fclose(handle);
    std::string bytes = testing::read_file_bytes(file_);
    bytes[offset] = static_cast<char>(~bytes[offset]);
    testing::write_file_bytes(file_, bytes);
  }
  try {
    run_inspect({file_, "--json"});
    ADD_FAILURE() << "inspect must throw on a corrupted file";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kCheckpoint);
    EXPECT_THAT(error.what(), HasSubstr(file_));
    EXPECT_THAT(error.what(), HasSubstr(victim));
  }
  EXPECT_THAT(printed_, HasSubstr("\"checksums_verified\":false"));
}

TEST_F(InspectCommandTest, MissingFileThrowsNamingIt) {
  if (rank_ != 0) return;
  const std::string missing = dir_ + "/nothing_here.h5";
  try {
    run_inspect({missing});
    ADD_FAILURE() << "inspect must throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kCheckpoint);
    EXPECT_THAT(error.what(), HasSubstr(missing));
  }
}

}  // namespace
}  // namespace sluice::checkpoint
