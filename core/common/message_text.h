// Values echoed in error messages are cut to a readable length: a 20 MB path (or config value) repeated whole
// would flood a terminal or a log, and the ends of a path are what identify it.
#pragma once

#include <cstddef>
#include <string>

namespace sluice {

// `text` unchanged up to 2 × `keep` + 40 characters; longer, its first and last `keep` characters around
// "...(N characters cut)...".
inline std::string shorten_for_message(const std::string& text, std::size_t keep = 100) {
  if (text.size() <= 2 * keep + 40) return text;
  return text.substr(0, keep) + "...(" + std::to_string(text.size() - 2 * keep) + " characters cut)..." +
         text.substr(text.size() - keep);
}

}  // namespace sluice
