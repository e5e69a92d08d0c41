#include "core/runtime/reference_checkpoint.h"

#include "checkpoint/format.h"
#include "checkpoint/reader.h"
#include "core/common/error.h"
#include "core/runtime/checkpoint_slots.h"

namespace sluice::runtime {

void load_checkpoint(SequentialReference& reference, const config::Config& cfg, const std::string& path) {
  checkpoint::Reader reader(path);
  reader.verify_all();
  const std::vector<Slot> slots = slots_of(reference.parameters(), reference.optimizer());
  check_compatible(reader, slots, cfg);
  const auto position = reader.train_ints().find(checkpoint::kAccumulationPositionDataset);
  if (position != reader.train_ints().end() && position->second != 0) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "' was saved in the middle of an "
                                        "accumulation window; the sequential reference loads step boundaries only");
  }
  for (const Slot& s : slots) reader.read_into(s.path, s.tensor->data(), static_cast<size_t>(s.tensor->size()));
  reference.set_steps_done(static_cast<uint64_t>(reader.train_int(checkpoint::kStepDataset)));
  const auto& ints = reader.train_ints();
  const auto mark = ints.find(checkpoint::kDataPositionInSamplesDataset);
  if (mark != ints.end() && mark->second == 1) {  // else an older file's step count (trainer_checkpoint.cc)
    reference.set_data_position(static_cast<uint64_t>(reader.train_int(checkpoint::kDataPositionDataset)));
  }
  reference.optimizer().set_step_count(reader.train_int(checkpoint::kOptimizerStepsDataset));
}

}  // namespace sluice::runtime
