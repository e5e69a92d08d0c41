#include "slurm/placeholders.h"

#include <cctype>
#include <set>

#include "core/common/error.h"

namespace sluice::slurm {
namespace {

bool is_placeholder_char(char c) {
  return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
}

// Length of the placeholder name starting at `begin` (just after an '@') when it is closed by '@', else 0.
size_t placeholder_name_length(const std::string& text, size_t begin) {
  size_t end = begin;
  while (end < text.size() && is_placeholder_char(text[end])) ++end;
  if (end == begin || end >= text.size() || text[end] != '@') return 0;
  return end - begin;
}

}  // namespace

std::string fill_placeholders(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string filled;
  filled.reserve(text.size());
  std::set<std::string> used;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t at = text.find('@', pos);
    if (at == std::string::npos) {
      filled.append(text, pos, std::string::npos);
      break;
    }
    filled.append(text, pos, at - pos);
    const size_t length = placeholder_name_length(text, at + 1);
    if (length == 0) {  // a lone '@' (e.g. `--signal=B:USR1@120`) is ordinary text
      filled.push_back('@');
      pos = at + 1;
      continue;
    }
    const std::string name = text.substr(at + 1, length);
    const auto value = values.find(name);
    if (value == values.end()) {
      throw Error(ErrorCode::kInternal, "template placeholder @" + name + "@ has no value");
    }
    filled += value->second;
    used.insert(name);
    pos = at + length + 2;
  }
  for (const auto& entry : values) {
    if (used.count(entry.first) == 0) {
      throw Error(ErrorCode::kInternal, "template has no placeholder @" + entry.first + "@ for the value given");
    }
  }
  return filled;
}

}  // namespace sluice::slurm
