#include "checkpoint/snapshot.h"

namespace sluice::checkpoint {

size_t data_type_size(DataType type) {
  switch (type) {
    case DataType::kFloat32: return 4;
    case DataType::kFloat64: return 8;
    case DataType::kInt32: return 4;
    case DataType::kInt64: return 8;
  }
  return 0;
}

const char* data_type_name(DataType type) {
  switch (type) {
    case DataType::kFloat32: return "float32";
    case DataType::kFloat64: return "float64";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
  }
  return "unknown";
}

bool data_type_from_name(const std::string& name, DataType& type) {
  for (DataType candidate : {DataType::kFloat32, DataType::kFloat64, DataType::kInt32, DataType::kInt64}) {
    if (name == data_type_name(candidate)) {
      type = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace sluice::checkpoint
