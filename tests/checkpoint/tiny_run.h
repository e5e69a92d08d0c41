// A tiny real training run for checkpoint tests that need a trainer: the model of testdata/v1_tiny.yaml (the
// config the committed version-1 checkpoints were written with), trained through the library's one training loop
// (runtime::run_training) exactly as `sluice train` does.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/runtime/trainer.h"

namespace sluice::checkpoint::testing {

// A file under tests/checkpoint/testdata, found through the test's runfiles.
std::string testdata_path(const std::string& name);

// testdata/v1_tiny.yaml with `steps` replaced and no checkpoint directory.
config::Config tiny_config(int steps);
// The same for another config under testdata (v2_field.yaml), and a started trainer of it.
config::Config testdata_config(const std::string& yaml, int steps);
std::unique_ptr<runtime::Trainer> testdata_trainer(const std::string& yaml, int steps);

// A started single-communicator trainer of tiny_config(steps).
std::unique_ptr<runtime::Trainer> tiny_trainer(int steps);

// Trains until the config's `steps` (resumed trainers continue from their step), as `sluice train` would.
void train_to_end(runtime::Trainer& trainer);

// Every parameter's values by qualified name.
std::map<std::string, std::vector<float>> parameters_of(runtime::Trainer& trainer);

}  // namespace sluice::checkpoint::testing
