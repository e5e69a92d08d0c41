// A trainer's model-only export (sluice_export_model; checkpoint/model_export.h): the file to ship for inference,
// without the optimizer state and the submitted samples a full checkpoint carries for a resume.
#pragma once

#include <string>

#include "core/runtime/application_state.h"
#include "core/runtime/trainer.h"

namespace sluice::runtime {

// Collective over the trainer's world, atomic like save_checkpoint (whose checks and errors it shares). The
// registered application arrays go in only with `with_application_state`, which must be the same on every rank
// (kInvalidArgument naming the first rank that differs).
void export_model(Trainer& trainer, const std::string& path, const ApplicationState* application,
                  bool with_application_state);

}  // namespace sluice::runtime
