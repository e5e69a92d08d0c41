// Quoting for words placed into generated bash scripts (paths and `--set` overrides given by the user).
#pragma once

#include <string>

namespace sluice::slurm {

// `word` as one bash word: unchanged when it only holds characters bash never interprets
// (A-Z a-z 0-9 and _ - . / = : , + @ %), else wrapped in single quotes with each ' written as '\''.
std::string shell_quote(const std::string& word);

}  // namespace sluice::slurm
