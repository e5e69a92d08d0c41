// Reads a Sluice YAML config (file or text), applies `--set` overrides, and returns the typed Config.
// Everything that can be checked without knowing the MPI world size is checked here; `make_layout` checks the
// rest. Every problem is a sluice::Error(ErrorCode::kConfig) of the form
//   config: pipeline.stages (line 7): expected a positive integer, got "four"
// and unknown keys are errors that list the allowed ones, so a typo never silently keeps a default.
#pragma once

#include <string>
#include <vector>

#include "core/config/config.h"

namespace sluice::config {

// `yaml_text_or_path`: if it names an existing file, the file is read; otherwise it is the YAML text itself.
// `overrides`: `key.path=value` strings (see yaml_overrides.h), applied in order before typed parsing.
// Config::text holds the YAML after overrides (the original text verbatim when there are none).
Config parse_config(const std::string& yaml_text_or_path, const std::vector<std::string>& overrides = {});

}  // namespace sluice::config
