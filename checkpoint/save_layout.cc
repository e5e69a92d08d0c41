#include "checkpoint/save_layout.h"

#include <stdexcept>

#include "checkpoint/hdf5_handle.h"
#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

constexpr const char* kStages = "layout_stages";
constexpr const char* kDataParallel = "layout_data_parallel";
constexpr const char* kChunks = "layout_chunks";
constexpr const char* kWorld = "layout_world";
constexpr const char* kSchedule = "layout_schedule";
// More stages, replicas, chunks or ranks than any machine has: a crafted or corrupted attribute.
constexpr int kMaxLayoutValue = 1 << 20;

int parse_positive(const std::map<std::string, std::string>& attributes, const char* name, const std::string& file) {
  const auto found = attributes.find(name);
  if (found == attributes.end()) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file, std::string("attribute ") + name, "missing"));
  }
  size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(found->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != found->second.size() || value < 1 || value > kMaxLayoutValue) {
    throw Error(ErrorCode::kCheckpoint,
                checkpoint_message(file, std::string("attribute ") + name,
                                   "'" + found->second + "' is not an integer in the allowed range [1, " +
                                       std::to_string(kMaxLayoutValue) + "]"));
  }
  return value;
}

}  // namespace

void add_layout_attributes(const SaveLayout& layout, std::map<std::string, std::string>& attributes) {
  attributes[kStages] = std::to_string(layout.stages);
  attributes[kDataParallel] = std::to_string(layout.data_parallel);
  attributes[kChunks] = std::to_string(layout.chunks);
  attributes[kWorld] = std::to_string(layout.world);
  attributes[kSchedule] = layout.schedule;
}

std::optional<SaveLayout> layout_from_attributes(const std::map<std::string, std::string>& attributes,
                                                 const std::string& file) {
  if (attributes.count(kStages) == 0) return std::nullopt;
  SaveLayout layout;
  layout.stages = parse_positive(attributes, kStages, file);
  layout.data_parallel = parse_positive(attributes, kDataParallel, file);
  layout.chunks = parse_positive(attributes, kChunks, file);
  layout.world = parse_positive(attributes, kWorld, file);
  const auto schedule = attributes.find(kSchedule);
  if (schedule != attributes.end()) layout.schedule = schedule->second;
  return layout;
}

}  // namespace sluice::checkpoint
