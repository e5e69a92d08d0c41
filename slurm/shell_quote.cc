#include "slurm/shell_quote.h"

#include <cctype>

namespace sluice::slurm {

std::string shell_quote(const std::string& word) {
  bool plain = !word.empty();
  for (char c : word) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string("_-./=:,+@%").find(c) == std::string::npos) {
      plain = false;
      break;
    }
  }
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted.push_back(c);
    }
  }
  quoted += "'";
  return quoted;
}

}  // namespace sluice::slurm
