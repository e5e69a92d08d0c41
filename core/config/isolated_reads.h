// Config key checkpoint.isolated_reads: whether a checkpoint is read first in a separate process
// (checkpoint/isolated_read.h). Vocabulary: every layer may include it.
#pragma once

#include "core/config/choice_table.h"

namespace sluice::config {

enum class IsolatedReads {
  kAuto,    // probe when the probe executable is found; otherwise read in-process, said once on stderr
  kAlways,  // probe; Error(kConfig) when the probe executable is not found
  kNever,   // read in-process (a crafted file can crash the process)
};

// auto, always, never.
inline const ChoiceTable<IsolatedReads>& isolated_reads_choices() {
  static const ChoiceTable<IsolatedReads> table = {
      {IsolatedReads::kAuto, "auto"}, {IsolatedReads::kAlways, "always"}, {IsolatedReads::kNever, "never"}};
  return table;
}

}  // namespace sluice::config
