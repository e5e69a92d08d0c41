#include "checkpoint/file_structure.h"

#include <cstdint>
#include <cstdio>
#include <set>

#include "checkpoint/checksum.h"
#include "checkpoint/format.h"
#include "checkpoint/hdf5_attributes.h"
#include "checkpoint/hdf5_handle.h"
#include "checkpoint/layer_paths.h"
#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

herr_t collect_object(hid_t, const char* name, const H5O_info_t* info, void* data) {
  auto* objects = static_cast<FileObjects*>(data);
  const std::string path = std::string("/") + name;
  if (path == "/.") return 0;  // the root group itself
  if (info->type == H5O_TYPE_DATASET) {
    objects->datasets.push_back(path);
  } else if (info->type == H5O_TYPE_GROUP) {
    objects->groups.push_back(path);
  } else {
    objects->others.push_back(path);
  }
  return 0;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

Error structure_error(const std::string& file, const std::string& object, const std::string& problem) {
  return Error(ErrorCode::kCheckpoint, checkpoint_message(file, object, problem));
}

// The groups a file may hold: the format's top-level groups, and every group on the path of a listed dataset.
std::set<std::string> expected_groups(const std::map<std::string, ManifestLine>& manifest) {
  std::set<std::string> groups = {kModelGroup,       kOptimizerGroup,   kAccumulationGroup,
                                  kTrainGroup,       kApplicationGroup, kSamplesGroup,
                                  kNormalizationGroup};
  for (const auto& [path, line] : manifest) {
    for (size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
      groups.insert(path.substr(0, slash));
    }
  }
  return groups;
}

// The writer creates every dataset with its maximum dimensions equal to its dimensions (fixed size). Other maximum
// dimensions change nothing the reader reads, but they are a changed file that must not pass as intact.
void require_fixed_size(hid_t dataset, const std::string& file, const std::string& object,
                        const std::vector<int64_t>& dims) {
  Hdf5Handle space(check_hdf5(H5Dget_space(dataset), file, object, "reading dataspace"), H5Sclose);
  std::vector<hsize_t> extents(dims.size());
  std::vector<hsize_t> limits(dims.size());
  if (!dims.empty() && H5Sget_simple_extent_dims(space.get(), extents.data(), limits.data()) < 0) {
    check_hdf5(static_cast<herr_t>(-1), file, object, "reading maximum dimensions");
  }
  if (limits != extents) {
    std::vector<int64_t> shown;
    for (hsize_t limit : limits) shown.push_back(limit > static_cast<hsize_t>(INT64_MAX) ? -1 : static_cast<int64_t>(limit));
    throw structure_error(file, object, "has maximum dimensions " + dims_text(shown) + " other than its dimensions " +
                                            dims_text(dims) + " (the writer makes every dataset fixed-size): the "
                                            "file is corrupted");
  }
}

void check_listed_dataset(hid_t file_handle, const std::string& file, const ManifestLine& line) {
  const std::string object = "dataset " + line.path;
  Hdf5Handle dataset(check_hdf5(H5Dopen2(file_handle, line.path.c_str(), H5P_DEFAULT), file, object, "opening"),
                     H5Dclose);
  const std::optional<DataType> type = stored_data_type(dataset.get(), file, object);
  const std::vector<int64_t> dims = dataset_dims(dataset.get(), file, object);
  if (type != line.type || dims != line.dims) {
    throw structure_error(file, object,
                          "is " + std::string(type ? data_type_name(*type) : "of an unsupported type") + " " +
                              dims_text(dims) + " but the manifest lists " + data_type_name(line.type) + " " +
                              dims_text(line.dims));
  }
  require_fixed_size(dataset.get(), file, object, dims);
}

// A listed path must be one the writer could have written (layer_paths.h): the one vocabulary of dataset names.
void check_listed_path(const std::string& file, const std::string& path) {
  try {
    const std::string train_prefix = std::string(kTrainGroup) + "/";
    if (path.compare(0, train_prefix.size(), train_prefix) == 0) {
      validate_name(path.substr(train_prefix.size()), "train value name");
    } else {
      validate_entry_path(path);
    }
  } catch (const Error& error) {
    throw structure_error(file, "dataset " + path, std::string("is not a dataset this format defines: ") +
                                                       error.what());
  }
}

std::string attribute_object(const std::string& path, const std::string& name) {
  return (path == "/" ? std::string("root") : "object " + path) + " attribute " + name;
}

void check_listed_attribute(hid_t object_id, const std::string& file, const AttributeLine& line) {
  const std::string object = attribute_object(line.object, line.name);
  uint32_t computed = 0;
  if (line.type == AttributeType::kString) {
    const std::string value = read_string_attribute(object_id, line.name, file, object);
    computed = attribute_crc32(line.object, line.name, value);
  } else {
    computed = attribute_crc32(line.object, line.name, read_int64_attribute(object_id, line.name, file, object));
  }
  if (computed != line.crc32) {
    char detail[160];
    std::snprintf(detail, sizeof(detail),
                  "checksum mismatch (the manifest lists crc32 %08x, the value has %08x): the attribute is corrupted",
                  line.crc32, computed);
    throw structure_error(file, object, detail);
  }
}

// Every attribute of one object is listed (or is a dataset's own crc32), and every listed one is there and intact.
void check_object_attributes(hid_t file_handle, const std::string& file, const std::string& path, bool is_dataset,
                             const Manifest& manifest) {
  const std::string object = path == "/" ? "root" : "object " + path;
  Hdf5Handle opened(check_hdf5(H5Oopen(file_handle, path.c_str(), H5P_DEFAULT), file, object, "opening"), H5Oclose);
  const std::vector<std::string> names = attribute_names(opened.get(), file, object);
  for (const std::string& name : names) {
    if (is_dataset && name == kChecksumAttribute) continue;
    if (manifest.attributes.count({path, name}) == 0) {
      throw structure_error(file, attribute_object(path, name), "is not listed in the manifest (an unexpected attribute)");
    }
  }
  const std::set<std::string> present(names.begin(), names.end());
  for (auto it = manifest.attributes.lower_bound({path, ""}); it != manifest.attributes.end() && it->first.first == path;
       ++it) {
    if (present.count(it->second.name) == 0) {
      throw structure_error(file, attribute_object(path, it->second.name), "is listed in the manifest but missing");
    }
    check_listed_attribute(opened.get(), file, it->second);
  }
}

}  // namespace

FileObjects list_objects(hid_t file_handle, const std::string& file) {
  FileObjects objects;
  check_hdf5(H5Ovisit(file_handle, H5_INDEX_NAME, H5_ITER_INC, collect_object, &objects), file, "file",
             "listing objects");
  return objects;
}

std::vector<int64_t> dataset_dims(hid_t dataset, const std::string& file, const std::string& object) {
  Hdf5Handle space(check_hdf5(H5Dget_space(dataset), file, object, "reading dataspace"), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) check_hdf5(static_cast<herr_t>(rank), file, object, "reading rank");
  std::vector<hsize_t> extents(static_cast<size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), extents.data(), nullptr);
  for (hsize_t extent : extents) {
    if (extent > static_cast<hsize_t>(INT64_MAX)) {
      throw structure_error(file, object, "has a dimension of " + std::to_string(extent) + " elements");
    }
  }
  return std::vector<int64_t>(extents.begin(), extents.end());
}

std::optional<DataType> stored_data_type(hid_t dataset, const std::string& file, const std::string& object) {
  Hdf5Handle type(check_hdf5(H5Dget_type(dataset), file, object, "reading type"), H5Tclose);
  const H5T_class_t type_class = H5Tget_class(type.get());
  const size_t size = H5Tget_size(type.get());
  if (type_class == H5T_FLOAT && size == 4) return DataType::kFloat32;
  if (type_class == H5T_FLOAT && size == 8) return DataType::kFloat64;
  if (type_class == H5T_INTEGER && H5Tget_sign(type.get()) == H5T_SGN_2) {
    if (size == 4) return DataType::kInt32;
    if (size == 8) return DataType::kInt64;
  }
  return std::nullopt;
}

Manifest read_manifest(hid_t file_handle, const std::string& file) {
  const std::string object = std::string("dataset ") + kManifestDataset;
  if (H5Lexists(file_handle, kManifestDataset, H5P_DEFAULT) <= 0) {
    throw structure_error(file, object, "missing (a version-2 checkpoint lists its datasets there)");
  }
  Hdf5Handle dataset(check_hdf5(H5Dopen2(file_handle, kManifestDataset, H5P_DEFAULT), file, object, "opening"),
                     H5Dclose);
  Hdf5Handle type(check_hdf5(H5Dget_type(dataset.get()), file, object, "reading type"), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0 ||
      !dataset_dims(dataset.get(), file, object).empty()) {
    throw structure_error(file, object, "is not a scalar fixed-length string");
  }
  std::string buffer(H5Tget_size(type.get()) + 1, '\0');
  check_hdf5(H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()), file, object,
             "reading");
  const std::string text(buffer.c_str());  // up to the terminator
  const std::string checked = kManifestChecksumHeader + text;
  const uint32_t stored = read_uint32_attribute(dataset.get(), kChecksumAttribute, file, object);
  if (stored != crc32_of(checked.data(), checked.size())) {
    throw structure_error(file, object, "checksum mismatch: the manifest is corrupted");
  }
  return parse_manifest_text(text, file);
}

void verify_attributes(hid_t file_handle, const std::string& file, const FileObjects& objects,
                       const Manifest& manifest) {
  std::set<std::string> paths = {"/"};
  check_object_attributes(file_handle, file, "/", false, manifest);
  for (const std::string& group : objects.groups) {
    paths.insert(group);
    check_object_attributes(file_handle, file, group, false, manifest);
  }
  for (const std::string& dataset : objects.datasets) {
    paths.insert(dataset);
    check_object_attributes(file_handle, file, dataset, true, manifest);
  }
  for (const auto& [key, line] : manifest.attributes) {
    if (paths.count(key.first) == 0) {
      throw structure_error(file, attribute_object(key.first, key.second),
                            "is listed in the manifest but its object is missing from the file");
    }
  }
}

void verify_structure(hid_t file_handle, const std::string& file, const FileObjects& objects,
                      const std::map<std::string, ManifestLine>& manifest) {
  if (!objects.others.empty()) {
    throw structure_error(file, "object " + objects.others.front(), "is neither a group nor a dataset");
  }
  const std::set<std::string> present(objects.datasets.begin(), objects.datasets.end());
  for (const std::string& path : objects.datasets) {
    if (path != kManifestDataset && manifest.count(path) == 0) {
      throw structure_error(file, "dataset " + path, "is not listed in the manifest (an unexpected dataset)");
    }
  }
  for (const auto& [path, line] : manifest) {
    if (present.count(path) == 0) {
      throw structure_error(file, "dataset " + path, "is listed in the manifest but missing from the file");
    }
  }
  const std::set<std::string> groups = expected_groups(manifest);
  for (const std::string& group : objects.groups) {
    if (groups.count(group) == 0) {
      throw structure_error(file, "group " + group, "is not expected: the manifest lists no dataset below it");
    }
  }
  for (const auto& [path, line] : manifest) {
    check_listed_path(file, path);
    check_listed_dataset(file_handle, file, line);
  }
}

}  // namespace sluice::checkpoint
