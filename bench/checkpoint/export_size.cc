// The size of a full checkpoint against a model-only export (sluice_export_model) for the diffusion2d surrogate
// (examples/fortran/diffusion2d.yaml) holding a replay buffer of submitted fields, as a simulation that trains its
// surrogate online keeps one. One process; the config's pipeline is run as one stage.
// Run (bench/checkpoint/README.md, "Export size"):
//   bazel run -c opt //bench/checkpoint:export_size -- $PWD/examples/fortran/diffusion2d.yaml 10000 /tmp/export_size
#include <mpi.h>
#include <sluice/sluice.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

long long file_bytes(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 ? static_cast<long long>(info.st_size) : -1;
}

bool replace(std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) return false;
  text.replace(at, from.size(), to);
  return true;
}

int fail(const char* what) {
  std::fprintf(stderr, "export_size: %s: %s\n", what, sluice_last_error());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: export_size CONFIG.yaml REPLAY_CAPACITY OUT_DIR\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string yaml = buffer.str();
  const long capacity = std::atol(argv[2]);
  const std::string dir = argv[3];
  if (!replace(yaml, "data: {type: external, batch: 32}",
               "data: {type: external, batch: 32, replay: {capacity: " + std::to_string(capacity) + "}}") ||
      !replace(yaml, "stages: 4", "stages: 1") || !replace(yaml, "every: 50", "every: 0")) {
    std::fprintf(stderr, "export_size: %s is not the diffusion2d config this measures\n", argv[1]);
    return 2;
  }
  MPI_Init(&argc, &argv);
  ::mkdir(dir.c_str(), 0755);
  sluice_trainer* t = nullptr;
  if (sluice_trainer_create(MPI_COMM_WORLD, yaml.c_str(), &t) != SLUICE_OK) return fail("create");
  if (sluice_trainer_start(t) != SLUICE_OK) return fail("start");
  int64_t in_features = 0, out_features = 0;
  sluice_trainer_features(t, &in_features, &out_features);
  std::vector<float> x(static_cast<size_t>(capacity * in_features)), y(static_cast<size_t>(capacity * out_features));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.001 * i));
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.001 * i));
  if (sluice_submit_samples(t, x.data(), y.data(), capacity) != SLUICE_OK) return fail("submit");
  float loss = 0;
  for (int step = 0; step < 2; ++step) {
    if (sluice_train_submitted(t, 0, &loss) != SLUICE_OK) return fail("train");
  }
  const std::string full = dir + "/full.h5", exported = dir + "/surrogate.h5";
  if (sluice_save_checkpoint(t, full.c_str()) != SLUICE_OK) return fail("save");
  if (sluice_export_model(t, exported.c_str(), 0) != SLUICE_OK) return fail("export");
  std::printf("replay capacity %ld samples of %lld + %lld floats\n", capacity, static_cast<long long>(in_features),
              static_cast<long long>(out_features));
  std::printf("full checkpoint %s: %lld bytes\nexport %s: %lld bytes\n", full.c_str(), file_bytes(full),
              exported.c_str(), file_bytes(exported));
  sluice_trainer_destroy(t);
  MPI_Finalize();
  return 0;
}
