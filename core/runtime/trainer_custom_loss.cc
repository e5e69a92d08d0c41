// `loss: custom` and the host's loss function (sluice_trainer_register_loss): checked once at start, on every
// rank (registration is local, so one rank may lack it; start's agreement turns that into an error everywhere).
#include "core/common/error.h"
#include "core/runtime/trainer.h"

namespace sluice::runtime {

void Trainer::check_custom_loss() const {
  if (cfg_.loss == model::LossKind::kCustom && !custom_loss_) {
    throw Error(ErrorCode::kConfig, "loss: custom needs a loss function: register one with "
                                    "sluice_trainer_register_loss before sluice_trainer_start (rank " +
                                        std::to_string(layout_.rank) + " has none; `sluice train` cannot have one)");
  }
  if (cfg_.loss != model::LossKind::kCustom && custom_loss_) {
    throw Error(ErrorCode::kConfig, "a loss function is registered (sluice_trainer_register_loss) but the config "
                                    "says loss: " + model::loss_kind_name(cfg_.loss) + "; use loss: custom");
  }
}

}  // namespace sluice::runtime
