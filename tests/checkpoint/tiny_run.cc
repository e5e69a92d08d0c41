#include "tests/checkpoint/tiny_run.h"

#include <mpi.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/config/config_parser.h"
#include "core/data/make_data_source.h"
#include "core/runtime/training_loop.h"

namespace sluice::checkpoint::testing {

std::string testdata_path(const std::string& name) {
  const char* root = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string relative = "tests/checkpoint/testdata/" + name;
  if (root == nullptr || workspace == nullptr) return relative;
  return std::string(root) + "/" + workspace + "/" + relative;
}

config::Config tiny_config(int steps) { return testdata_config("v1_tiny.yaml", steps); }

std::unique_ptr<runtime::Trainer> testdata_trainer(const std::string& yaml, int steps) {
  auto trainer = std::make_unique<runtime::Trainer>(MPI_COMM_WORLD, testdata_config(yaml, steps));
  trainer->start();
  return trainer;
}

config::Config testdata_config(const std::string& yaml, int steps) {
  std::ifstream in(testdata_path(yaml));
  std::stringstream text;
  text << in.rdbuf();
  config::Config cfg = config::parse_config(text.str());
  cfg.steps = steps;
  cfg.steps_given = true;
  cfg.checkpoint.every = 0;  // the tests save where they want
  return cfg;
}

std::unique_ptr<runtime::Trainer> tiny_trainer(int steps) {
  auto trainer = std::make_unique<runtime::Trainer>(MPI_COMM_WORLD, tiny_config(steps));
  trainer->start();
  return trainer;
}

void train_to_end(runtime::Trainer& trainer) {
  runtime::RunControl control(trainer, [](const std::string&) {});
  const std::unique_ptr<data::DataSource> source = data::make_data_source(trainer.config());
  runtime::run_training(trainer, *source, control, {});
}

std::map<std::string, std::vector<float>> parameters_of(runtime::Trainer& trainer) {
  std::map<std::string, std::vector<float>> values;
  for (const auto& [index, stage] : trainer.parts().stages) {
    for (model::Parameter* p : stage->parameters()) values[p->qualified_name()] = p->value.to_vector();
  }
  return values;
}

}  // namespace sluice::checkpoint::testing
