// Test helper: writes an HDF5 file with float datasets `inputs` [rows][in] and `targets` [rows][out] holding a
// smooth, learnable mapping, for `sluice train` runs with `data.type: hdf5`. With IN_SHAPE and OUT_SHAPE
// (comma-separated sample shapes such as 2,16,16 whose products are IN and OUT) the datasets are stored
// [rows, C, D..] instead, the layout a domain split reads blocks of.
// Usage: make_hdf5_data FILE ROWS IN OUT [IN_SHAPE OUT_SHAPE]
#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// "2,16,16" -> {2, 16, 16}; empty when `text` is null.
std::vector<hsize_t> parse_shape(const char* text) {
  std::vector<hsize_t> shape;
  for (const char* p = text; p != nullptr && *p != '\0';) {
    char* end = nullptr;
    shape.push_back(std::strtoull(p, &end, 10));
    p = *end == ',' ? end + 1 : nullptr;
  }
  return shape;
}

bool write(hid_t file, const char* name, const std::vector<float>& values, hsize_t rows, hsize_t cols,
           const std::vector<hsize_t>& sample_shape) {
  hsize_t product = 1;
  for (hsize_t d : sample_shape) product *= d;
  if (!sample_shape.empty() && product != cols) return false;
  std::vector<hsize_t> dims{rows};
  if (sample_shape.empty()) dims.push_back(cols);
  dims.insert(dims.end(), sample_shape.begin(), sample_shape.end());
  hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  hid_t set = H5Dcreate2(file, name, H5T_NATIVE_FLOAT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const bool ok = set >= 0 && H5Dwrite(set, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0;
  if (set >= 0) H5Dclose(set);
  H5Sclose(space);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 7) {
    std::fprintf(stderr, "usage: %s FILE ROWS IN OUT [IN_SHAPE OUT_SHAPE]\n", argv[0]);
    return 2;
  }
  const long rows = std::atol(argv[2]), in = std::atol(argv[3]), out = std::atol(argv[4]);
  std::vector<float> x(rows * in), y(rows * out);
  for (long r = 0; r < rows; ++r) {
    for (long i = 0; i < in; ++i) x[r * in + i] = std::sin(0.37f * r + 1.3f * i);
    for (long j = 0; j < out; ++j) {
      float s = 0.0f;
      for (long i = 0; i < in; ++i) s += x[r * in + i] * std::cos(0.5f * i + j);
      y[r * out + j] = std::tanh(s / in);
    }
  }
  hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) return 1;
  const std::vector<hsize_t> in_shape = parse_shape(argc == 7 ? argv[5] : nullptr);
  const std::vector<hsize_t> out_shape = parse_shape(argc == 7 ? argv[6] : nullptr);
  const bool ok = write(file, "inputs", x, rows, in, in_shape) && write(file, "targets", y, rows, out, out_shape);
  H5Fclose(file);
  return ok ? 0 : 1;
}
