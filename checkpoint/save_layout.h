// The pipeline / data-parallel layout a checkpoint was saved under, stored as root attributes layout_*. Loading does
// not need it (the dataset layout is rank-independent); it tells a human or `sluice inspect` where the file came
// from, and lets a trainer log that it is resharding.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace sluice::checkpoint {

struct SaveLayout {
  int stages = 1;         // pipeline stages
  int data_parallel = 1;  // data-parallel replicas
  int chunks = 1;         // model chunks per stage (interleaved schedules, ZB-V)
  int world = 1;          // MPI ranks
  std::string schedule;   // e.g. "1f1b", "zbv"
};

// Adds layout_stages, layout_data_parallel, layout_chunks, layout_world and layout_schedule to attributes.
void add_layout_attributes(const SaveLayout& layout, std::map<std::string, std::string>& attributes);

// nullopt when the file carries no layout_* attributes; Error(kCheckpoint) naming the attribute when one is
// present but not a valid number.
std::optional<SaveLayout> layout_from_attributes(const std::map<std::string, std::string>& attributes,
                                                 const std::string& file);

}  // namespace sluice::checkpoint
