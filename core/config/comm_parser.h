// Section `comm` of the config: timeouts and the wait policy of Sluice's own waits (config.h, CommSpec).
#pragma once

#include "core/config/config.h"
#include "core/config/config_node.h"

namespace sluice::config {

CommSpec parse_comm(const ConfigNode& node);

}  // namespace sluice::config
