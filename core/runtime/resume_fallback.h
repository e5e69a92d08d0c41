// Resuming from a checkpoint directory when its newest file is damaged. A week-long job killed while the file
// system was failing can leave a latest checkpoint that is complete by name but fails verification (a flipped
// byte, a truncated copy). Refusing to start would stall the job; starting from scratch would lose the week. So a
// directory resume walks back from the newest checkpoint to the first one that verifies, warning about each one it
// skips, and fails only when every checkpoint in the directory is damaged.
#pragma once

#include <string>
#include <vector>

#include "core/runtime/application_state.h"
#include "core/runtime/trainer.h"

namespace sluice::runtime {

// The complete checkpoints (ckpt_<step>.h5; temporaries ignored) of `dir`, newest step first. Local; a missing
// directory has none.
std::vector<std::string> checkpoints_newest_first(const std::string& dir);

// Collective. Loads the newest checkpoint of `dir` that passes verification (checkpoint::verify_all: readable,
// every checksum right) and returns its path. Rank 0 lists the directory and every rank tries the same files in the
// same order, so all ranks agree on the file. Each skipped file is named on rank 0's stderr with the reason. A
// checkpoint that verifies but does not fit this run (another seed, model, replica count) is NOT skipped: that
// error (kCheckpoint) is thrown, since an older file of the same run would not fit either and silently going back
// would hide the mistake. When no file verifies: kCheckpoint naming every file and its reason; the trainer is
// unchanged.
std::string load_newest_valid(Trainer& trainer, const std::string& dir, const ApplicationState* application);

}  // namespace sluice::runtime
