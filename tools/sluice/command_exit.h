// Thrown by a subcommand that has already reported what happened and wants a specific exit code
// (for instance 75 after `train` wrote a preemption checkpoint). main() turns it into the exit status.
#pragma once

namespace sluice::tools {

struct CommandExit {
  int code;
};

}  // namespace sluice::tools
