// Loads a checkpoint (any pipeline layout) into the single-process sequential reference, the test oracle of
// core/runtime/sequential_reference.h. Test-only: libsluice and the sluice command never link it.
#pragma once

#include <string>

#include "core/config/config.h"
#include "core/runtime/sequential_reference.h"

namespace sluice::runtime {

// Every layer is read. Not collective.
void load_checkpoint(SequentialReference& reference, const config::Config& cfg, const std::string& path);

}  // namespace sluice::runtime
