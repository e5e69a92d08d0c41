#include "tests/checkpoint/checkpoint_test_support.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "checkpoint/layer_paths.h"

namespace sluice::checkpoint::testing {
namespace {

struct SyntheticTensor {
  const char* kind;  // which path builder
  const char* param;
  std::vector<int64_t> dims;
};

const std::vector<SyntheticTensor>& synthetic_tensors() {
  static const std::vector<SyntheticTensor> tensors = {
      {"model", "weight", {3, 4}}, {"model", "bias", {4}}, {"optimizer", "weight", {3, 4}}};
  return tensors;
}

std::string path_of(int layer, const SyntheticTensor& tensor) {
  return std::string(tensor.kind) == "model" ? model_path(layer, tensor.param)
                                             : optimizer_path(layer, tensor.param, "exp_avg");
}

std::vector<float> values_of(int layer, int tensor_index) {
  const SyntheticTensor& tensor = synthetic_tensors()[static_cast<size_t>(tensor_index)];
  size_t count = 1;
  for (int64_t dim : tensor.dims) count *= static_cast<size_t>(dim);
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = synthetic_value(layer, tensor_index, i);
  return values;
}

}  // namespace

std::string make_shared_temp_dir(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  char path[4096] = {0};
  if (rank == 0) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/ckpt_test.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    pattern.copy(path, sizeof(path) - 1);
  }
  MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, comm);
  return path;
}

float synthetic_value(int layer, int tensor, size_t i) {
  return static_cast<float>(layer) * 100.0f + static_cast<float>(tensor) * 10.0f + static_cast<float>(i) * 0.25f;
}

Snapshot synthetic_snapshot(int layers, int ranks, int my_rank) {
  Snapshot snapshot;
  for (int layer = my_rank; layer < layers; layer += ranks) {
    for (size_t t = 0; t < synthetic_tensors().size(); ++t) {
      const SyntheticTensor& tensor = synthetic_tensors()[t];
      snapshot.entries.push_back({path_of(layer, tensor), tensor.dims, values_of(layer, static_cast<int>(t))});
    }
  }
  return snapshot;
}

std::vector<float> expected_data(const std::string& path) {
  const auto layer = layer_index_of(path);
  if (!layer) throw std::runtime_error("not a layer path: " + path);
  for (size_t t = 0; t < synthetic_tensors().size(); ++t) {
    if (path_of(*layer, synthetic_tensors()[t]) == path) return values_of(*layer, static_cast<int>(t));
  }
  throw std::runtime_error("not a synthetic tensor: " + path);
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace sluice::checkpoint::testing
