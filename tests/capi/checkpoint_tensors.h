// Reads a Sluice checkpoint's trained state straight from the HDF5 file (not through Sluice's own reader), so a
// test can compare two runs' parameters and optimizer state value by value.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace sluice::capi_test {

// Every dataset under /model and /optimizer, keyed by its full path ("/model/layer_0004/weight"), as float32
// in row-major order. Throws std::runtime_error naming the file and dataset if anything cannot be read.
std::map<std::string, std::vector<float>> read_checkpoint_tensors(const std::string& file);

}  // namespace sluice::capi_test
