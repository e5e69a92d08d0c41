// `sluice train --set key.path=value`: edits the YAML node tree before typed parsing, so an override is
// validated exactly like the same value written in the file.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace sluice::config {

// Applies one `key.path=value` assignment to `root` and returns the dotted key path it set.
// Path segments walk maps by key and sequences by 0-based index (`model.layers.1.outputs`); a missing map key
// on the way is created as an empty map. `value` is parsed as YAML (`[1,2]` is a list; an empty value is the
// empty string). Throws sluice::Error(kConfig) naming the assignment when the path runs through a scalar, an
// index is not a number or out of range, or the value is not valid YAML.
std::string apply_override(YAML::Node& root, const std::string& assignment);

}  // namespace sluice::config
