#include "core/schedule/cost_profile.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <vector>

#include "core/common/error.h"

namespace sluice {
namespace schedule {
namespace {

constexpr const char* kMagic = "sluice_cost_profile";

Error bad(const std::string& source, int line, const std::string& what) {
  return Error(ErrorCode::kInvalidArgument,
               "cost profile " + source + (line > 0 ? ", line " + std::to_string(line) : "") + ": " + what);
}

double number(const std::string& source, int line, const std::string& key, std::istringstream& in) {
  double value = 0;
  std::string rest;
  if (!(in >> value) || (in >> rest) || !std::isfinite(value) || value < 0)
    throw bad(source, line, key + " needs one finite number >= 0");
  return value;
}

}  // namespace

CostModel costs_for(const CostProfile& profile, int virtual_stages, double rows) {
  if (virtual_stages < 1 || !(rows > 0))
    throw Error(ErrorCode::kInvalidArgument, "costs_for: virtual stages and rows must be positive");
  const double stage = 1.0 / virtual_stages;  // of the whole model, per action
  CostModel costs;
  costs.forward = (profile.forward_per_microbatch + profile.forward_per_sample * rows) * stage;
  costs.backward_input = (profile.backward_input_per_microbatch + profile.backward_input_per_sample * rows) * stage;
  costs.backward_weight = (profile.backward_weight_per_microbatch + profile.backward_weight_per_sample * rows) * stage;
  costs.latency = profile.message_latency + profile.message_per_row * rows;
  return costs;
}

CostProfile profile_from(const CostModel& costs, int virtual_stages, double rows, const std::string& measured_with) {
  if (virtual_stages < 1 || !(rows > 0))
    throw Error(ErrorCode::kInvalidArgument, "profile_from: virtual stages and rows must be positive");
  const double per_sample = virtual_stages / rows;
  CostProfile profile;
  profile.forward_per_sample = costs.forward * per_sample;
  profile.backward_input_per_sample = costs.backward_input * per_sample;
  profile.backward_weight_per_sample = costs.backward_weight * per_sample;
  profile.message_seconds = profile.message_latency = transfer_time(costs);
  profile.microbatch_rows = rows;
  profile.measured_with = measured_with;
  return profile;
}

std::string to_text(const CostProfile& profile) {
  std::ostringstream out;
  out << std::setprecision(17) << kMagic << " 2\n"
      << "forward_seconds_per_sample " << profile.forward_per_sample << "\n"
      << "backward_input_seconds_per_sample " << profile.backward_input_per_sample << "\n"
      << "backward_weight_seconds_per_sample " << profile.backward_weight_per_sample << "\n"
      << "forward_seconds_per_microbatch " << profile.forward_per_microbatch << "\n"
      << "backward_input_seconds_per_microbatch " << profile.backward_input_per_microbatch << "\n"
      << "backward_weight_seconds_per_microbatch " << profile.backward_weight_per_microbatch << "\n"
      << "message_seconds " << profile.message_seconds << "\n"
      << "message_latency_seconds " << profile.message_latency << "\n"
      << "message_seconds_per_row " << profile.message_per_row << "\n"
      << "microbatch_rows " << profile.microbatch_rows << "\n";
  if (!profile.fit_rows.empty()) out << "fit_rows " << profile.fit_rows << "\n";
  if (!profile.measured_with.empty()) out << "measured_with " << profile.measured_with << "\n";
  return out.str();
}

namespace {

// The numeric keys, each required in the versions from `since` on.
struct NumberKey {
  const char* name;
  double CostProfile::*field;
  int since;
};

const std::vector<NumberKey>& number_keys() {
  static const std::vector<NumberKey> keys = {
      {"forward_seconds_per_sample", &CostProfile::forward_per_sample, 1},
      {"backward_input_seconds_per_sample", &CostProfile::backward_input_per_sample, 1},
      {"backward_weight_seconds_per_sample", &CostProfile::backward_weight_per_sample, 1},
      {"message_seconds", &CostProfile::message_seconds, 1},
      {"forward_seconds_per_microbatch", &CostProfile::forward_per_microbatch, 2},
      {"backward_input_seconds_per_microbatch", &CostProfile::backward_input_per_microbatch, 2},
      {"backward_weight_seconds_per_microbatch", &CostProfile::backward_weight_per_microbatch, 2},
      {"message_latency_seconds", &CostProfile::message_latency, 2},
      {"message_seconds_per_row", &CostProfile::message_per_row, 2}};
  return keys;
}

// Reads every `key value` line into `profile`; returns the line each key was on.
std::map<std::string, int> read_lines(const std::string& content, const std::string& source, CostProfile& profile) {
  std::map<std::string, int> seen;
  std::istringstream lines(content);
  std::string text;
  for (int line = 1; std::getline(lines, text); ++line) {
    std::istringstream in(text.substr(0, text.find('#')));
    std::string key;
    if (!(in >> key)) continue;
    if (seen.count(key)) throw bad(source, line, "duplicate key " + key);
    seen[key] = line;
    const auto numeric = std::find_if(number_keys().begin(), number_keys().end(),
                                      [&](const NumberKey& k) { return key == k.name; });
    if (key == kMagic) {
      const double version = number(source, line, key, in);
      if (version != 1 && version != 2) throw bad(source, line, "unsupported version (expected 1 or 2)");
      profile.version = static_cast<int>(version);
    } else if (key == "microbatch_rows") {
      profile.microbatch_rows = number(source, line, key, in);
      if (!(profile.microbatch_rows > 0)) throw bad(source, line, "microbatch_rows must be positive");
    } else if (key == "measured_with" || key == "fit_rows") {
      std::getline(in >> std::ws, key == "fit_rows" ? profile.fit_rows : profile.measured_with);
    } else if (numeric != number_keys().end()) {
      profile.*(numeric->field) = number(source, line, key, in);
    } else {
      throw bad(source, line, "unknown key '" + key + "'");
    }
  }
  return seen;
}

}  // namespace

CostProfile parse_cost_profile(const std::string& content, const std::string& source) {
  CostProfile profile;
  const std::map<std::string, int> seen = read_lines(content, source, profile);
  if (!seen.count(kMagic)) throw bad(source, 0, std::string("missing the '") + kMagic + " 2' (or 1) line");
  for (const NumberKey& key : number_keys()) {
    if (key.since <= profile.version && !seen.count(key.name)) throw bad(source, 0, std::string("missing ") + key.name);
    if (key.since > profile.version && seen.count(key.name))
      throw bad(source, seen.at(key.name), std::string(key.name) + " needs sluice_cost_profile 2");
  }
  if (!(profile.forward_per_sample > 0)) throw bad(source, 0, "forward_seconds_per_sample must be positive");
  // Version 1 measured one size: every message costs what it did then, whatever its rows.
  if (profile.version == 1) profile.message_latency = profile.message_seconds;
  return profile;
}

void save_cost_profile(const CostProfile& profile, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw Error(ErrorCode::kIo, "cannot open cost profile '" + path + "' for writing");
  out << to_text(profile);
  out.flush();
  if (!out) throw Error(ErrorCode::kIo, "failed writing cost profile '" + path + "'");
}

CostProfile load_cost_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::kIo, "cannot open cost profile '" + path + "' for reading");
  std::ostringstream content;
  content << in.rdbuf();
  return parse_cost_profile(content.str(), path);
}

}  // namespace schedule
}  // namespace sluice
