// Config key pipeline.schedule: one of the built-in schedule kinds (core/schedule/schedule_kinds.h, which holds
// their names and chunk rules) or auto, chosen at start (core/runtime/schedule_choice.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/schedule/schedule_kinds.h"

namespace sluice::config {

// Empty: auto (resolved to a kind before anything runs a schedule).
using ScheduleSetting = std::optional<schedule::ScheduleKind>;

inline const std::string& auto_schedule_name() {
  static const std::string name = "auto";
  return name;
}
// The schedule kinds' names, then auto: what pipeline.schedule accepts, in the order its error lists them.
inline const std::vector<std::string>& schedule_setting_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = schedule::schedule_names();
    all.push_back(auto_schedule_name());
    return all;
  }();
  return names;
}
inline ScheduleSetting schedule_setting_named(const std::string& name) {
  if (name == auto_schedule_name()) return std::nullopt;
  if (const std::optional<schedule::ScheduleKind> kind = schedule::find_schedule_kind(name)) return kind;
  throw Error(ErrorCode::kConfig, "pipeline.schedule: unknown value \"" + name + "\"");
}
// As the config, the start report, `sluice plan` and a checkpoint's layout_schedule spell it.
inline std::string schedule_setting_name(const ScheduleSetting& setting) {
  return setting ? schedule::schedule_kind_name(*setting) : auto_schedule_name();
}
// The kind of a resolved setting; Error(kInternal) when auto was not resolved before a schedule was made.
inline schedule::ScheduleKind resolved_schedule(const ScheduleSetting& setting) {
  if (!setting) throw Error(ErrorCode::kInternal, "pipeline.schedule auto used before it was resolved");
  return *setting;
}
inline const char* resolved_schedule_name(const ScheduleSetting& setting) {
  return schedule::schedule_kind_name(resolved_schedule(setting));
}

}  // namespace sluice::config
