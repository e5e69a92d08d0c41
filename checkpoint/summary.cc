#include "checkpoint/summary.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "checkpoint/format.h"
#include "checkpoint/layer_paths.h"
#include "checkpoint/reader.h"
#include "core/common/checked_math.h"
#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

int64_t element_count(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  // The dims come from the file: a crafted or corrupt one must not wrap into a small count.
  for (int64_t dim : dims) count = checked_mul(count, dim, "checkpoint dataset element count", ErrorCode::kCheckpoint);
  return count;
}

// "/model/layer_0003/weight" -> top "model", name "weight".
void split_state_path(const std::string& path, std::string& top, std::string& name) {
  const size_t second = path.find('/', 1);
  const size_t third = path.find('/', second + 1);
  top = path.substr(1, second - 1);
  name = path.substr(third + 1);
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string json_dims(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

std::string json_tensors(const std::vector<TensorSummary>& tensors) {
  std::string text = "[";
  for (size_t i = 0; i < tensors.size(); ++i) {
    text += (i ? "," : "") + std::string("{\"name\":") + json_string(tensors[i].name) +
            ",\"dims\":" + json_dims(tensors[i].dims) + ",\"elements\":" + std::to_string(tensors[i].elements) + "}";
  }
  return text + "]";
}

// A float as JSON: 9 significant digits (enough to round-trip float32); null for a non-finite value.
std::string json_number(float value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", static_cast<double>(value));
  return text;
}

// The first few values of a normalization statistic, for the text summary (the JSON has them all).
std::string values_text(const std::vector<float>& values) {
  constexpr size_t kShown = 8;
  std::string text;
  for (size_t i = 0; i < values.size() && i < kShown; ++i) {
    char value[32];
    std::snprintf(value, sizeof(value), "%.6g", static_cast<double>(values[i]));
    text += (i ? " " : "") + std::string(value);
  }
  if (values.size() > kShown) text += " ...";
  return text;
}

std::string tensors_text(const std::vector<TensorSummary>& tensors) {
  std::string text;
  for (size_t i = 0; i < tensors.size(); ++i) {
    text += (i ? ", " : "") + tensors[i].name + " " + dims_text(tensors[i].dims);
  }
  return text;
}

}  // namespace

CheckpointSummary summarize(const std::string& path) {
  const Reader reader(path);
  CheckpointSummary summary;
  summary.file = reader.file();
  summary.format_version = reader.format_version();
  summary.manifest_verified = reader.has_manifest();
  summary.train_ints = reader.train_ints();
  summary.attributes = reader.attributes();
  summary.layout = layout_from_attributes(reader.attributes(), reader.file());

  std::map<int, LayerSummary> layers;
  for (const std::string& dataset : reader.paths()) {
    const auto layer = layer_index_of(dataset);
    if (!layer) {
      const std::string normalization_prefix = std::string(kNormalizationGroup) + "/";
      if (dataset.compare(0, normalization_prefix.size(), normalization_prefix) == 0) {
        std::vector<float> values;
        try {
          values = reader.read(dataset).data;
        } catch (const Error&) {  // verify_all below reports it
        }
        summary.normalization[dataset.substr(normalization_prefix.size())] = std::move(values);
        ++summary.datasets;
        continue;
      }
      if (dataset.compare(0, std::string(kSamplesGroup).size() + 1, std::string(kSamplesGroup) + "/") != 0) continue;
      TensorSummary held{dataset.substr(std::string(kSamplesGroup).size() + 1), reader.dims(dataset), 0};
      held.elements = element_count(held.dims);
      summary.samples.push_back(std::move(held));
      ++summary.datasets;
      continue;
    }
    std::string top;
    TensorSummary tensor;
    split_state_path(dataset, top, tensor.name);
    tensor.dims = reader.dims(dataset);
    tensor.elements = element_count(tensor.dims);
    LayerSummary& entry = layers[*layer];
    entry.layer = *layer;
    if ("/" + top == kModelGroup) {
      entry.parameters.push_back(tensor);
      summary.parameter_elements += tensor.elements;
    } else if ("/" + top == kOptimizerGroup) {
      entry.optimizer_state.push_back(tensor);
    } else {
      entry.accumulation.push_back(tensor);
    }
    ++summary.datasets;
  }
  for (auto& [index, layer] : layers) summary.layers.push_back(std::move(layer));
  for (const std::string& dataset : reader.application_paths()) {
    ApplicationArraySummary array;
    array.name = dataset.substr(std::string(kApplicationGroup).size() + 1);
    array.type = data_type_name(reader.application_type(dataset));
    array.dims = reader.application_dims(dataset);
    array.elements = element_count(array.dims);
    summary.application.push_back(std::move(array));
    ++summary.datasets;
  }

  try {
    reader.verify_all();
    summary.checksums_verified = true;
  } catch (const Error& error) {
    summary.checksum_error = error.what();
  }
  return summary;
}

std::string summary_text(const CheckpointSummary& summary) {
  std::ostringstream out;
  out << "checkpoint:      " << summary.file << "\n";
  out << "format_version:  " << summary.format_version
      << (summary.manifest_verified ? " (structure matches /manifest)" : " (no manifest: version-1 checks)") << "\n";
  const auto step = summary.train_ints.find(kStepDataset);
  out << "step:            " << (step != summary.train_ints.end() ? std::to_string(step->second) : "(none)") << "\n";
  out << "train values:   ";
  for (const auto& [name, value] : summary.train_ints) out << " " << name << "=" << value;
  out << "\n";
  if (summary.layout) {
    const SaveLayout& layout = *summary.layout;
    out << "saved under:     stages=" << layout.stages << " data_parallel=" << layout.data_parallel
        << " chunks=" << layout.chunks << " world=" << layout.world << " schedule=" << layout.schedule << "\n";
  } else {
    out << "saved under:     (no layout recorded)\n";
  }
  const auto created_by = summary.attributes.find(kCreatedByAttribute);
  if (created_by != summary.attributes.end()) out << "created_by:      " << created_by->second << "\n";
  const auto exported = summary.attributes.find(kExportAttribute);
  if (exported != summary.attributes.end()) {
    out << "export:          " << exported->second << " (model-only: no optimizer state or samples; not resumable)\n";
  }
  out << "layers:          " << summary.layers.size() << " (" << summary.parameter_elements << " parameters, "
      << summary.datasets << " datasets)\n";
  for (const LayerSummary& layer : summary.layers) {
    int64_t elements = 0;
    for (const TensorSummary& tensor : layer.parameters) elements += tensor.elements;
    out << "  " << layer_group_name(layer.layer) << (layer.type.empty() ? "" : " (" + layer.type + ")") << ": "
        << elements << " parameters: "
        << tensors_text(layer.parameters);
    if (!layer.optimizer_state.empty()) out << "; optimizer: " << tensors_text(layer.optimizer_state);
    if (!layer.accumulation.empty()) out << "; accumulation: " << tensors_text(layer.accumulation);
    out << "\n";
  }
  if (!summary.application.empty()) {
    out << "application:     " << summary.application.size() << " arrays:";
    for (size_t i = 0; i < summary.application.size(); ++i) {
      const ApplicationArraySummary& array = summary.application[i];
      out << (i ? ", " : " ") << array.name << " " << array.type << " " << dims_text(array.dims);
    }
    out << "\n";
  }
  if (!summary.samples.empty()) out << "samples:         " << tensors_text(summary.samples) << "\n";
  for (const auto& [name, values] : summary.normalization) {
    out << "normalization:   " << name << " [" << values.size() << "]: " << values_text(values) << "\n";
  }
  out << "checksums:       "
      << (summary.checksums_verified ? "all " + std::to_string(summary.datasets) + " verified"
                                     : "FAILED: " + summary.checksum_error)
      << "\n";
  return out.str();
}

std::string summary_json(const CheckpointSummary& summary) {
  std::ostringstream out;
  out << "{\"file\":" << json_string(summary.file) << ",\"format_version\":" << summary.format_version
      << ",\"manifest_verified\":" << (summary.manifest_verified ? "true" : "false");
  const auto step = summary.train_ints.find(kStepDataset);
  out << ",\"step\":" << (step != summary.train_ints.end() ? std::to_string(step->second) : "null");
  out << ",\"train\":{";
  bool first = true;
  for (const auto& [name, value] : summary.train_ints) {
    out << (first ? "" : ",") << json_string(name) << ":" << value;
    first = false;
  }
  out << "},\"layout\":";
  if (summary.layout) {
    const SaveLayout& layout = *summary.layout;
    out << "{\"stages\":" << layout.stages << ",\"data_parallel\":" << layout.data_parallel
        << ",\"chunks\":" << layout.chunks << ",\"world\":" << layout.world
        << ",\"schedule\":" << json_string(layout.schedule) << "}";
  } else {
    out << "null";
  }
  const auto created_by = summary.attributes.find(kCreatedByAttribute);
  out << ",\"created_by\":" << (created_by != summary.attributes.end() ? json_string(created_by->second) : "null");
  const auto exported = summary.attributes.find(kExportAttribute);
  out << ",\"export\":" << (exported != summary.attributes.end() ? json_string(exported->second) : "null");
  out << ",\"parameter_elements\":" << summary.parameter_elements << ",\"datasets\":" << summary.datasets;
  out << ",\"layers\":[";
  for (size_t i = 0; i < summary.layers.size(); ++i) {
    const LayerSummary& layer = summary.layers[i];
    out << (i ? "," : "") << "{\"index\":" << layer.layer << ",\"parameters\":" << json_tensors(layer.parameters)
        << ",\"optimizer\":" << json_tensors(layer.optimizer_state)
        << ",\"accumulation\":" << json_tensors(layer.accumulation)
        << ",\"type\":" << (layer.type.empty() ? "null" : json_string(layer.type)) << "}";
  }
  out << "],\"application\":[";
  for (size_t i = 0; i < summary.application.size(); ++i) {
    const ApplicationArraySummary& array = summary.application[i];
    out << (i ? "," : "") << "{\"name\":" << json_string(array.name) << ",\"type\":" << json_string(array.type)
        << ",\"dims\":" << json_dims(array.dims) << ",\"elements\":" << array.elements << "}";
  }
  out << "],\"samples\":" << json_tensors(summary.samples);
  out << ",\"normalization\":{";
  bool first_statistic = true;
  for (const auto& [name, values] : summary.normalization) {
    out << (first_statistic ? "" : ",") << json_string(name) << ":[";
    for (size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << json_number(values[i]);
    out << "]";
    first_statistic = false;
  }
  out << "}";
  out << ",\"checksums_verified\":" << (summary.checksums_verified ? "true" : "false");
  out << ",\"checksum_error\":" << (summary.checksums_verified ? "null" : json_string(summary.checksum_error));
  out << "}";
  return out.str();
}

}  // namespace sluice::checkpoint
