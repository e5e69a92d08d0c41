// Test helper: writes an HDF5 file with float datasets `inputs` [rows][in] and `targets` [rows][out] holding a
// smooth, learnable mapping, for `sluice train` runs with `data.type: hdf5`.
// Usage: make_hdf5_data FILE ROWS IN OUT
#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

bool write(hid_t file, const char* name, const std::vector<float>& values, hsize_t rows, hsize_t cols) {
  const hsize_t dims[2] = {rows, cols};
  hid_t space = H5Screate_simple(2, dims, nullptr);
  hid_t set = H5Dcreate2(file, name, H5T_NATIVE_FLOAT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const bool ok = set >= 0 && H5Dwrite(set, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0;
  if (set >= 0) H5Dclose(set);
  H5Sclose(space);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s FILE ROWS IN OUT\n", argv[0]);
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
  const bool ok = write(file, "inputs", x, rows, in) && write(file, "targets", y, rows, out);
  H5Fclose(file);
  return ok ? 0 : 1;
}
