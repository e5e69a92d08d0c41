#include "checkpoint/hdf5_attributes.h"

#include <vector>

#include "checkpoint/hdf5_handle.h"
#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

void write_scalar(hid_t object_id, const std::string& name, hid_t file_type, hid_t memory_type, const void* value,
                  const std::string& file, const std::string& object) {
  const std::string what = object + " attribute " + name;
  Hdf5Handle space(check_hdf5(H5Screate(H5S_SCALAR), file, what, "creating dataspace"), H5Sclose);
  Hdf5Handle attribute(
      check_hdf5(H5Acreate2(object_id, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), file, what,
                 "creating attribute"),
      H5Aclose);
  check_hdf5(H5Awrite(attribute.get(), memory_type, value), file, what, "writing attribute");
}

Hdf5Handle open_attribute(hid_t object_id, const std::string& name, const std::string& file,
                          const std::string& object) {
  if (!has_attribute(object_id, name)) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file, object, "attribute '" + name + "' is missing"));
  }
  return Hdf5Handle(check_hdf5(H5Aopen(object_id, name.c_str(), H5P_DEFAULT), file,
                               object + " attribute " + name, "opening attribute"),
                    H5Aclose);
}

template <typename T>
T read_integer(hid_t object_id, const std::string& name, hid_t memory_type, const std::string& file,
               const std::string& object) {
  Hdf5Handle attribute = open_attribute(object_id, name, file, object);
  Hdf5Handle type(check_hdf5(H5Aget_type(attribute.get()), file, object, "reading attribute type"), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_INTEGER) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file, object, "attribute '" + name + "' is not an integer"));
  }
  T value{};
  check_hdf5(H5Aread(attribute.get(), memory_type, &value), file, object + " attribute " + name, "reading attribute");
  return value;
}

struct StringCollection {
  std::map<std::string, std::string>* values;
  const std::string* file;
  const std::string* object;
  std::string failure;
};

std::string read_string_value(hid_t attribute, hid_t type, const std::string& file, const std::string& what) {
  if (H5Tis_variable_str(type) > 0) {
    Hdf5Handle memory_type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memory_type.get(), H5T_VARIABLE);
    char* text = nullptr;
    check_hdf5(H5Aread(attribute, memory_type.get(), &text), file, what, "reading attribute");
    std::string value = text != nullptr ? text : "";
    H5free_memory(text);
    return value;
  }
  const size_t size = H5Tget_size(type);
  std::vector<char> buffer(size + 1, '\0');
  check_hdf5(H5Aread(attribute, type, buffer.data()), file, what, "reading attribute");
  return std::string(buffer.data());  // stops at the terminator (NULLTERM) or the padding (NULLPAD)
}

herr_t collect_string_attribute(hid_t object_id, const char* name, const H5A_info_t*, void* data) {
  auto* collection = static_cast<StringCollection*>(data);
  const std::string what = *collection->object + " attribute " + name;
  try {
    Hdf5Handle attribute(check_hdf5(H5Aopen(object_id, name, H5P_DEFAULT), *collection->file, what, "opening"),
                         H5Aclose);
    Hdf5Handle type(check_hdf5(H5Aget_type(attribute.get()), *collection->file, what, "reading type"), H5Tclose);
    if (H5Tget_class(type.get()) == H5T_STRING) {
      (*collection->values)[name] = read_string_value(attribute.get(), type.get(), *collection->file, what);
    }
  } catch (const Error& error) {
    collection->failure = error.what();  // exceptions must not cross HDF5's C frames
    return -1;
  }
  return 0;
}

}  // namespace

void write_string_attribute(hid_t object_id, const std::string& name, const std::string& value,
                            const std::string& file, const std::string& object) {
  // Fixed-length, NUL-terminated: h5dump prints it as plain text and no variable-length heap is involved.
  Hdf5Handle type(check_hdf5(H5Tcopy(H5T_C_S1), file, object, "creating string type"), H5Tclose);
  check_hdf5(H5Tset_size(type.get(), value.size() + 1), file, object, "sizing string type");
  check_hdf5(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), file, object, "setting string padding");
  write_scalar(object_id, name, type.get(), type.get(), value.c_str(), file, object);
}

void write_int64_attribute(hid_t object_id, const std::string& name, int64_t value, const std::string& file,
                           const std::string& object) {
  write_scalar(object_id, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, file, object);
}

void write_uint32_attribute(hid_t object_id, const std::string& name, uint32_t value, const std::string& file,
                            const std::string& object) {
  write_scalar(object_id, name, H5T_STD_U32LE, H5T_NATIVE_UINT32, &value, file, object);
}

bool has_attribute(hid_t object_id, const std::string& name) { return H5Aexists(object_id, name.c_str()) > 0; }

int64_t read_int64_attribute(hid_t object_id, const std::string& name, const std::string& file,
                             const std::string& object) {
  return read_integer<int64_t>(object_id, name, H5T_NATIVE_INT64, file, object);
}

uint32_t read_uint32_attribute(hid_t object_id, const std::string& name, const std::string& file,
                               const std::string& object) {
  return read_integer<uint32_t>(object_id, name, H5T_NATIVE_UINT32, file, object);
}

std::string read_string_attribute(hid_t object_id, const std::string& name, const std::string& file,
                                  const std::string& object) {
  Hdf5Handle attribute = open_attribute(object_id, name, file, object);
  Hdf5Handle type(check_hdf5(H5Aget_type(attribute.get()), file, object, "reading attribute type"), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file, object, "attribute '" + name + "' is not a string"));
  }
  return read_string_value(attribute.get(), type.get(), file, object + " attribute " + name);
}

std::vector<std::string> attribute_names(hid_t object_id, const std::string& file, const std::string& object) {
  H5O_info_t info;
  check_hdf5(H5Oget_info(object_id, &info), file, object, "reading object info");
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.num_attrs; ++i) {
    const ssize_t length = H5Aget_name_by_idx(object_id, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (length < 0) check_hdf5(static_cast<herr_t>(length), file, object, "reading attribute names");
    std::vector<char> name(static_cast<size_t>(length) + 1, '\0');
    check_hdf5(static_cast<herr_t>(H5Aget_name_by_idx(object_id, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(),
                                                      name.size(), H5P_DEFAULT) < 0 ? -1 : 0),
               file, object, "reading attribute names");
    names.emplace_back(name.data());
  }
  return names;
}

std::map<std::string, std::string> read_string_attributes(hid_t object_id, const std::string& file,
                                                          const std::string& object) {
  std::map<std::string, std::string> values;
  StringCollection collection{&values, &file, &object, ""};
  hsize_t index = 0;
  if (H5Aiterate2(object_id, H5_INDEX_NAME, H5_ITER_INC, &index, collect_string_attribute, &collection) < 0) {
    if (collection.failure.empty()) collection.failure = checkpoint_message(file, object, take_hdf5_error_text());
    H5Eclear2(H5E_DEFAULT);
    throw Error(ErrorCode::kCheckpoint, collection.failure);
  }
  return values;
}

}  // namespace sluice::checkpoint
