#include "tests/capi/checkpoint_tensors.h"

#include <hdf5.h>

#include <stdexcept>

namespace sluice::capi_test {
namespace {

struct Visit {
  std::vector<std::string> paths;
};

herr_t collect_state_dataset(hid_t, const char* name, const H5O_info_t* info, void* data) {
  if (info->type != H5O_TYPE_DATASET) return 0;
  const std::string path = std::string("/") + name;
  if (path.rfind("/model/", 0) == 0 || path.rfind("/optimizer/", 0) == 0) {
    static_cast<Visit*>(data)->paths.push_back(path);
  }
  return 0;
}

void check(bool ok, const std::string& file, const std::string& what) {
  if (!ok) throw std::runtime_error("checkpoint '" + file + "': " + what);
}

std::vector<float> read_floats(hid_t handle, const std::string& file, const std::string& path) {
  const hid_t dataset = H5Dopen2(handle, path.c_str(), H5P_DEFAULT);
  check(dataset >= 0, file, "cannot open dataset " + path);
  const hid_t space = H5Dget_space(dataset);
  const hssize_t count = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  std::vector<float> values(count > 0 ? static_cast<size_t>(count) : 0);
  // H5T_NATIVE_FLOAT converts nothing for the float32 datasets Sluice writes; an integer dataset here would be
  // converted silently, which is why the caller only asks for /model and /optimizer.
  const herr_t read = count >= 0 ? H5Dread(dataset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data())
                                 : -1;
  if (space >= 0) H5Sclose(space);
  H5Dclose(dataset);
  check(read >= 0, file, "cannot read dataset " + path + " as float32");
  return values;
}

}  // namespace

std::map<std::string, std::vector<float>> read_checkpoint_tensors(const std::string& file) {
  const hid_t handle = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  check(handle >= 0, file, "cannot open the file");
  std::map<std::string, std::vector<float>> tensors;
  try {
    Visit visit;
    check(H5Ovisit(handle, H5_INDEX_NAME, H5_ITER_INC, collect_state_dataset, &visit) >= 0, file,
          "cannot list the datasets");
    for (const std::string& path : visit.paths) tensors[path] = read_floats(handle, file, path);
  } catch (...) {
    H5Fclose(handle);
    throw;
  }
  H5Fclose(handle);
  return tensors;
}

}  // namespace sluice::capi_test
