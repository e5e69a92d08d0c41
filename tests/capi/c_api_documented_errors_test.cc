// Every error status a function's comment in sluice.h lists, provoked once and checked against the status the
// library returns: the header and the code cannot drift apart. One table row per (function, listed status); a
// status the header lists but no single-rank test can provoke (MPI not initialized, COMM, CUDA) is named in
// kNotProvokable below with the reason. One rank, so every call fails locally with its own message.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <sluice/sluice.h>
#include <sys/stat.h>

#include "tests/capi/misuse_test_support.h"

namespace {

using namespace capi_test;  // NOLINT: the shared sizes, scale layer and data of the C API tests

// The single-rank model of these cases, with `extra` YAML appended (a checkpoint section, steps).
std::string config(const std::string& first_layer = "{type: linear, outputs: 4}", const std::string& extra = "") {
  return "model:\n  inputs: " + std::to_string(kFeatures) + "\n  layers:\n    - " + first_layer +
         "\n    - {type: linear, outputs: " + std::to_string(kOutputs) +
         "}\npipeline: {stages: 1, schedule: 1f1b, microbatches: " + std::to_string(kMicrobatches) +
         "}\noptimizer: {type: sgd, lr: 0.1}\ndata: {type: external, batch: " + std::to_string(kBatch) + "}\n" + extra;
}

std::string scratch_dir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp");
}

// The trainers a case makes, destroyed after it.
struct Scratch {
  std::vector<sluice_trainer*> trainers;
  Data data;
  std::vector<float> outputs = std::vector<float>(kBatch * kOutputs);
  ~Scratch() {
    for (sluice_trainer* t : trainers) sluice_trainer_destroy(t);
  }
  sluice_trainer* created(const std::string& yaml = config()) {
    sluice_trainer* t = nullptr;
    EXPECT_EQ(sluice_trainer_create(MPI_COMM_WORLD, yaml.c_str(), &t), SLUICE_OK) << sluice_last_error();
    trainers.push_back(t);
    return t;
  }
  sluice_trainer* started(const std::string& yaml = config()) {
    sluice_trainer* t = created(yaml);
    EXPECT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
    return t;
  }
  sluice_status step(sluice_trainer* t) {
    return sluice_train_step(t, data.inputs.data(), data.targets.data(), kBatch, nullptr);
  }
};

struct Case {
  const char* function;  // as in sluice.h
  sluice_status listed;  // a status its comment lists
  const char* fragment;  // the message names the problem
  std::function<sluice_status(Scratch&)> provoke;
};

std::ostream& operator<<(std::ostream& out, const Case& c) { return out << c.function << " -> " << c.listed; }

sluice_status create(const std::string& yaml) {
  sluice_trainer* t = nullptr;
  const sluice_status status = sluice_trainer_create(MPI_COMM_WORLD, yaml.c_str(), &t);
  sluice_trainer_destroy(t);
  return status;
}

// A file that is not a checkpoint.
std::string garbage_file() {
  const std::string path = scratch_dir() + "/garbage.h5";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("not an HDF5 file\n", f);
  std::fclose(f);
  return path;
}

// A checkpoint probe (SLUICE_CHECKPOINT_PROBE) that never finishes: the library must kill it at its limit.
std::string hanging_probe() {
  const std::string path = scratch_dir() + "/hanging_probe.sh";
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("#!/bin/sh\nexec sleep 120\n", f);
  std::fclose(f);
  chmod(path.c_str(), 0755);
  return path;
}

constexpr const char* kLinear = "{type: linear, outputs: 4}";

// Listed in sluice.h but not provokable from one healthy MPI rank: STATE of sluice_trainer_create (MPI not
// initialized: this test runs inside MPI), COMM (an MPI failure), CUDA (a CPU build), UNSUPPORTED of the checkpoint
// calls (a build without HDF5), INTERNAL of sluice_install_signal_handlers (sigaction failing), CHECKPOINT of
// sluice_train_step's periodic save (it writes a fresh file; its IO failure is covered), TIMEOUT of
// sluice_model_load(_checkpoint) (its probe's limit comes from the process's comm.timeout, at least 300 s without a
// trainer; sluice_trainer_resume's TIMEOUT runs the same code).

std::vector<Case> lifecycle_cases() {
  return {
      {"sluice_trainer_create", SLUICE_ERROR_INVALID_ARGUMENT, "config is NULL",
       [](Scratch&) {
         sluice_trainer* t = nullptr;
         return sluice_trainer_create(MPI_COMM_WORLD, nullptr, &t);
       }},
      {"sluice_trainer_create", SLUICE_ERROR_CONFIG, "pipeline.stages",
       [](Scratch&) { return create("model: {inputs: 4, layers: [{type: linear, outputs: 2}]}\n"
                                    "pipeline: {stages: four}\n"); }},
      {"sluice_trainer_create", SLUICE_ERROR_CONFIG, "pipeline.chunks (line",
       [](Scratch&) {
         std::string yaml = config();
         yaml.replace(yaml.find("schedule: 1f1b"), 14, "schedule: zb-v, chunks: 1");
         return create(yaml);
       }},
      {"sluice_trainer_create", SLUICE_ERROR_IO, "no_such_config.yaml\" does not exist",
       [](Scratch&) { return create(scratch_dir() + "/no_such_config.yaml"); }},
      {"sluice_trainer_register_layer", SLUICE_ERROR_INVALID_ARGUMENT, "forward callback is NULL",
       [](Scratch& s) {
         sluice_layer_ops ops = scale_ops();
         ops.forward = nullptr;
         return sluice_trainer_register_layer(s.created(), "scale", &ops, nullptr);
       }},
      {"sluice_trainer_register_layer", SLUICE_ERROR_INVALID_ARGUMENT, "sluice_layer_ops::struct_size is 0",
       [](Scratch& s) {
         sluice_layer_ops ops = scale_ops();
         ops.struct_size = 0;
         return sluice_trainer_register_layer(s.created(), "scale", &ops, nullptr);
       }},
      {"sluice_trainer_register_layer", SLUICE_ERROR_UNSUPPORTED, "does not know",
       [](Scratch& s) {
         struct {
           sluice_layer_ops known;
           int64_t future;
         } longer{scale_ops(), 1};
         longer.known.struct_size = sizeof longer;
         return sluice_trainer_register_layer(s.created(), "scale", &longer.known, nullptr);
       }},
      {"sluice_trainer_register_layer", SLUICE_ERROR_STATE, "before sluice_trainer_start",
       [](Scratch& s) {
         const sluice_layer_ops ops = scale_ops();
         return sluice_trainer_register_layer(s.started(), "scale", &ops, nullptr);
       }},
      {"sluice_trainer_start", SLUICE_ERROR_STATE, "already started",
       [](Scratch& s) { return sluice_trainer_start(s.started()); }},
      {"sluice_trainer_start", SLUICE_ERROR_CONFIG, "no_such_layer",
       [](Scratch& s) { return sluice_trainer_start(s.created(config("{type: custom, name: no_such_layer}"))); }},
      {"sluice_trainer_start", SLUICE_ERROR_IO, "ckpt",
       [](Scratch& s) {
         // checkpoint.dir below a regular file cannot be created, so its lock cannot be taken.
         const std::string dir = garbage_file() + "/ckpt";
         return sluice_trainer_start(s.created(config("{type: linear, outputs: 4}", "checkpoint: {dir: " + dir + "}\n")));
       }},
  };
}

std::vector<Case> step_cases() {
  return {
      {"sluice_train_step", SLUICE_ERROR_STATE, "not started", [](Scratch& s) { return s.step(s.created()); }},
      {"sluice_train_step", SLUICE_ERROR_STATE, "steps: 1",
       [](Scratch& s) {
         sluice_trainer* t = s.started(config("{type: linear, outputs: 4}", "steps: 1\n"));
         EXPECT_EQ(s.step(t), SLUICE_OK) << sluice_last_error();
         return s.step(t);
       }},
      {"sluice_train_step", SLUICE_ERROR_INVALID_ARGUMENT, "smaller than pipeline.microbatches",
       [](Scratch& s) { return sluice_train_step(s.started(), s.data.inputs.data(), s.data.targets.data(), 1, nullptr); }},
      {"sluice_train_step", SLUICE_ERROR_CALLBACK, "forward returned 1",
       [](Scratch& s) {
         static ScaleLayer failing;
         failing.fail_forward = 1;
         sluice_trainer* t = s.created(config("{type: custom, name: scale}"));
         const sluice_layer_ops ops = scale_ops();
         EXPECT_EQ(sluice_trainer_register_layer(t, "scale", &ops, &failing), SLUICE_OK);
         EXPECT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
         return s.step(t);
       }},
      {"sluice_train_step", SLUICE_ERROR_IO, "ckpt_io",
       [](Scratch& s) {
         // checkpoint.dir replaced by a regular file after start: the periodic save of step 1 cannot write into it.
         const std::string dir = scratch_dir() + "/ckpt_io";
         std::filesystem::remove_all(dir);
         sluice_trainer* t = s.started(config("{type: linear, outputs: 4}", "checkpoint: {dir: " + dir + ", every: 1}\n"));
         std::filesystem::remove_all(dir);
         std::fclose(std::fopen(dir.c_str(), "w"));
         return s.step(t);
       }},
      {"sluice_evaluate", SLUICE_ERROR_STATE, "not started",
       [](Scratch& s) { return sluice_evaluate(s.created(), s.data.inputs.data(), s.data.targets.data(), kBatch, nullptr); }},
      {"sluice_evaluate", SLUICE_ERROR_INVALID_ARGUMENT, "targets is NULL",
       [](Scratch& s) { return sluice_evaluate(s.started(), s.data.inputs.data(), nullptr, kBatch, nullptr); }},
      {"sluice_predict", SLUICE_ERROR_STATE, "not started",
       [](Scratch& s) { return sluice_predict(s.created(), s.data.inputs.data(), s.outputs.data(), kBatch); }},
      {"sluice_predict", SLUICE_ERROR_CALLBACK, "forward returned 1",
       [](Scratch& s) {
         static ScaleLayer failing;
         failing.fail_forward = 1;
         sluice_trainer* t = s.created(config("{type: custom, name: scale}"));
         const sluice_layer_ops ops = scale_ops();
         EXPECT_EQ(sluice_trainer_register_layer(t, "scale", &ops, &failing), SLUICE_OK);
         EXPECT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
         return sluice_predict(t, s.data.inputs.data(), s.outputs.data(), kBatch);
       }},
      {"sluice_predict", SLUICE_ERROR_INVALID_ARGUMENT, "outputs is NULL",
       [](Scratch& s) { return sluice_predict(s.started(), s.data.inputs.data(), nullptr, kBatch); }},
  };
}

std::vector<Case> checkpoint_cases() {
  return {
      {"sluice_save_checkpoint", SLUICE_ERROR_STATE, "not started",
       [](Scratch& s) { return sluice_save_checkpoint(s.created(), "x.h5"); }},
      {"sluice_save_checkpoint", SLUICE_ERROR_IO, "no_such_dir",
       [](Scratch& s) { return sluice_save_checkpoint(s.started(), (scratch_dir() + "/no_such_dir/x.h5").c_str()); }},
      {"sluice_export_model", SLUICE_ERROR_STATE, "not started",
       [](Scratch& s) { return sluice_export_model(s.created(), "x.h5", 0); }},
      {"sluice_export_model", SLUICE_ERROR_INVALID_ARGUMENT, "checkpoint path is NULL or empty",
       [](Scratch& s) { return sluice_export_model(s.started(), nullptr, 0); }},
      {"sluice_export_model", SLUICE_ERROR_IO, "no_such_dir",
       [](Scratch& s) { return sluice_export_model(s.started(), (scratch_dir() + "/no_such_dir/x.h5").c_str(), 0); }},
      {"sluice_load_checkpoint", SLUICE_ERROR_STATE, "not started",
       [](Scratch& s) { return sluice_load_checkpoint(s.created(), "x.h5"); }},
      {"sluice_load_checkpoint", SLUICE_ERROR_CHECKPOINT, "garbage.h5",
       [](Scratch& s) { return sluice_load_checkpoint(s.started(), garbage_file().c_str()); }},
      {"sluice_trainer_resume", SLUICE_ERROR_STATE, "not started",
       [](Scratch& s) {
         int64_t step = 0;
         return sluice_trainer_resume(s.created(), nullptr, &step);
       }},
      {"sluice_trainer_resume", SLUICE_ERROR_INVALID_ARGUMENT, "step (int64_t*) is NULL",
       [](Scratch& s) { return sluice_trainer_resume(s.started(), scratch_dir().c_str(), nullptr); }},
      {"sluice_trainer_resume", SLUICE_ERROR_CONFIG, "checkpoint.dir",
       [](Scratch& s) {
         int64_t step = 0;
         return sluice_trainer_resume(s.started(), nullptr, &step);
       }},
      {"sluice_trainer_resume", SLUICE_ERROR_CONFIG, "checkpoint.isolated_reads is always but the checkpoint probe",
       [](Scratch& s) {
         // No SLUICE_CHECKPOINT_PROBE here and no probe beside this test binary.
         int64_t step = 0;
         return sluice_trainer_resume(s.started(config(kLinear, "checkpoint: {isolated_reads: always}\n")),
                                      garbage_file().c_str(), &step);
       }},
      {"sluice_trainer_resume", SLUICE_ERROR_TIMEOUT, "reading it did not finish within",
       [](Scratch& s) {
         const std::string probe = hanging_probe();
         setenv("SLUICE_CHECKPOINT_PROBE", probe.c_str(), 1);
         int64_t step = 0;
         const sluice_status status =
             sluice_trainer_resume(s.started(config(kLinear, "comm: {timeout: 1}\n")), garbage_file().c_str(), &step);
         unsetenv("SLUICE_CHECKPOINT_PROBE");
         return status;
       }},
      {"sluice_trainer_resume", SLUICE_ERROR_CHECKPOINT, "missing.h5",
       [](Scratch& s) {
         int64_t step = 0;
         return sluice_trainer_resume(s.started(), (scratch_dir() + "/missing.h5").c_str(), &step);
       }},
  };
}

std::vector<Case> state_and_loop_cases() {
  return {
      {"sluice_register_state", SLUICE_ERROR_INVALID_ARGUMENT, "count",
       [](Scratch& s) {
         double x = 0;
         return sluice_register_state(s.created(), "x", &x, SLUICE_FLOAT64, -1, SLUICE_STATE_PER_RANK);
       }},
      {"sluice_unregister_state", SLUICE_ERROR_INVALID_ARGUMENT, "nothing_here",
       [](Scratch& s) { return sluice_unregister_state(s.created(), "nothing_here"); }},
      {"sluice_install_signal_handlers", SLUICE_ERROR_INVALID_ARGUMENT, "trainer handle is NULL",
       [](Scratch&) { return sluice_install_signal_handlers(nullptr); }},
      {"sluice_stop_requested", SLUICE_ERROR_STATE, "not started",
       [](Scratch& s) {
         int stop = 0;
         return sluice_stop_requested(s.created(), &stop);
       }},
      {"sluice_stop_requested", SLUICE_ERROR_INVALID_ARGUMENT, "stop (int*) is NULL",
       [](Scratch& s) { return sluice_stop_requested(s.started(), nullptr); }},
      {"sluice_join_with_error", SLUICE_ERROR_INVALID_ARGUMENT, "status is SLUICE_OK",
       [](Scratch& s) { return sluice_join_with_error(s.started(), "sluice_train_step", SLUICE_OK, "x"); }},
      {"sluice_report_error", SLUICE_ERROR_INVALID_ARGUMENT, "status is SLUICE_OK",
       [](Scratch&) { return sluice_report_error(SLUICE_OK, "x"); }},
      {"sluice_trainer_stats", SLUICE_ERROR_INVALID_ARGUMENT, "out (sluice_stats*) is NULL",
       [](Scratch& s) { return sluice_trainer_stats(s.created(), nullptr); }},
      {"sluice_trainer_stats", SLUICE_ERROR_INVALID_ARGUMENT, "sluice_stats::struct_size is 0",
       [](Scratch& s) {
         sluice_stats stats{};
         return sluice_trainer_stats(s.created(), &stats);
       }},
      {"sluice_trainer_layout", SLUICE_ERROR_STATE, "not started",
       [](Scratch& s) {
         sluice_layout layout = SLUICE_LAYOUT_INIT;
         return sluice_trainer_layout(s.created(), &layout);
       }},
      {"sluice_trainer_layout", SLUICE_ERROR_INVALID_ARGUMENT, "sluice_layout::struct_size is 0",
       [](Scratch& s) {
         sluice_layout layout{};
         return sluice_trainer_layout(s.started(), &layout);
       }},
      {"sluice_trainer_batch_share", SLUICE_ERROR_INVALID_ARGUMENT, "does not split into",
       [](Scratch& s) {
         int64_t first = 0, count = 0;
         return sluice_trainer_batch_share(s.started(), 1, &first, &count);
       }},
      {"sluice_trainer_batch_share", SLUICE_ERROR_STATE, "not started",
       [](Scratch& s) {
         int64_t first = 0, count = 0;
         return sluice_trainer_batch_share(s.created(), 8, &first, &count);
       }},
      {"sluice_trainer_set_domain", SLUICE_ERROR_INVALID_ARGUMENT, "not a field",
       [](Scratch& s) {
         const int64_t extents[1] = {kFeatures}, offsets[1] = {0};
         return sluice_trainer_set_domain(s.created(), 1, extents, offsets, extents);
       }},
      {"sluice_trainer_set_domain", SLUICE_ERROR_STATE, "before sluice_trainer_start",
       [](Scratch& s) {
         const int64_t extents[1] = {kFeatures}, offsets[1] = {0};
         return sluice_trainer_set_domain(s.started(), 1, extents, offsets, extents);
       }},
      {"sluice_trainer_features", SLUICE_ERROR_INVALID_ARGUMENT, "output pointer is NULL",
       [](Scratch& s) { return sluice_trainer_features(s.created(), nullptr, nullptr); }},
      {"sluice_trainer_features", SLUICE_ERROR_CONFIG, "not registered yet",
       [](Scratch& s) {
         int64_t in = 0, out = 0;
         return sluice_trainer_features(s.created(config("{type: custom, name: scale}")), &in, &out);
       }},
  };
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> rows;
    for (const auto& part : {lifecycle_cases(), step_cases(), checkpoint_cases(), state_and_loop_cases()}) {
      rows.insert(rows.end(), part.begin(), part.end());
    }
    return rows;
  }();
  return all;
}

class Documented : public ::testing::TestWithParam<Case> {};

TEST_P(Documented, ReturnsTheListedStatus) {
  const Case& c = GetParam();
  Scratch scratch;
  const sluice_status status = c.provoke(scratch);
  const std::string message = sluice_last_error();
  EXPECT_EQ(status, c.listed) << c.function << ": " << sluice_status_string(status) << ": " << message;
  EXPECT_NE(message.find(c.fragment), std::string::npos) << "message \"" << message << "\" lacks \"" << c.fragment
                                                         << "\"";
}

INSTANTIATE_TEST_SUITE_P(SluiceH, Documented, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.function) + "_" + std::to_string(info.index);
                         });

}  // namespace
