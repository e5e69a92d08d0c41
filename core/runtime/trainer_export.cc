#include "core/runtime/trainer_export.h"

#include <string>
#include <vector>

#include "checkpoint/model_export.h"
#include "core/common/error.h"
#include "core/runtime/trainer_checkpoint.h"

namespace sluice::runtime {
namespace {

// Ranks that disagree would write a file with some ranks' arrays and not others': every rank sees every rank's
// flag, so all throw the same error.
void check_same_flag(Trainer& trainer, bool with_application_state) {
  const double mine = with_application_state ? 1.0 : 0.0;
  const std::vector<double> all = trainer.parts().mpi->world_group().all_gather(&mine, 1);
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] == all[0]) continue;
    throw Error(ErrorCode::kInvalidArgument, "sluice_export_model: ranks passed different with_application_state "
                                             "(rank 0 and rank " + std::to_string(r) +
                                                 " differ); every rank must pass the same");
  }
}

}  // namespace

void export_model(Trainer& trainer, const std::string& path, const ApplicationState* application,
                  bool with_application_state) {
  checkpoint::ExportOptions options;
  options.with_application_state = with_application_state;
  // The edit runs on every rank after save_checkpoint's own agreed checks (started, path), before anything is
  // written.
  save_checkpoint(trainer, path, application, [&](checkpoint::Snapshot& snapshot) {
    check_same_flag(trainer, with_application_state);
    checkpoint::strip_to_model(snapshot, options);
  }, "sluice_export_model");
}

}  // namespace sluice::runtime
