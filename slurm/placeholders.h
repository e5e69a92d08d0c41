// Fills `@NAME@` placeholders in a template. Strict both ways, so a template and its launcher cannot drift
// apart silently: a placeholder without a value and a value without a placeholder are both errors.
#pragma once

#include <map>
#include <string>

namespace sluice::slurm {

// Replaces every `@NAME@` (NAME: A-Z, 0-9, _) in `text` by values.at(NAME). Throws sluice::Error(kInternal)
// naming the placeholder when one has no value or a value is never used. Values are inserted verbatim (they
// are not scanned again for placeholders).
std::string fill_placeholders(const std::string& text, const std::map<std::string, std::string>& values);

}  // namespace sluice::slurm
