// One name table per closed config choice: the enum values and their YAML spellings, in the order error messages
// list them. Parsing, printing, the docs' lists and the error that lists valid values all come from the table, so
// product code compares enums, never strings. Header-only vocabulary: every layer may include it.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"

namespace sluice::config {

template <typename Enum>
class ChoiceTable {
 public:
  struct Row {
    Enum value;
    const char* name;
  };

  ChoiceTable(std::initializer_list<Row> rows) : rows_(rows) {
    for (const Row& row : rows_) names_.emplace_back(row.name);
  }

  std::optional<Enum> find(const std::string& name) const {
    for (const Row& row : rows_) {
      if (name == row.name) return row.value;
    }
    return std::nullopt;
  }
  // `key` names the config key in the error: "<key>: unknown value \"x\"; expected a, b or c" (Error kConfig).
  Enum parse(const std::string& name, const std::string& key) const {
    if (const std::optional<Enum> value = find(name)) return *value;
    throw Error(ErrorCode::kConfig, key + ": unknown value \"" + name + "\"; expected " + names_text(" or "));
  }
  const char* name_of(Enum value) const {
    for (const Row& row : rows_) {
      if (row.value == value) return row.name;
    }
    throw Error(ErrorCode::kInternal, "ChoiceTable: a value without a name");
  }
  const std::vector<std::string>& names() const { return names_; }
  // "a, b, c", or "a, b or c" with last = " or ".
  std::string names_text(const std::string& last = ", ") const {
    std::string text;
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (i > 0) text += i + 1 == names_.size() ? last : ", ";
      text += names_[i];
    }
    return text;
  }

 private:
  std::vector<Row> rows_;
  std::vector<std::string> names_;
};

}  // namespace sluice::config
