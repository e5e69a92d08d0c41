#include "core/schedule/cost_profile.h"

#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

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
  const double share = rows / virtual_stages;
  CostModel costs;
  costs.forward = profile.forward_per_sample * share;
  costs.backward_input = profile.backward_input_per_sample * share;
  costs.backward_weight = profile.backward_weight_per_sample * share;
  costs.latency = profile.message_seconds;
  return costs;
}

CostProfile profile_from(const CostModel& costs, int virtual_stages, double rows, const std::string& measured_with) {
  if (virtual_stages < 1 || !(rows > 0))
    throw Error(ErrorCode::kInvalidArgument, "profile_from: virtual stages and rows must be positive");
  const double per_sample = virtual_stages / rows;
  return {costs.forward * per_sample, costs.backward_input * per_sample, costs.backward_weight * per_sample,
          transfer_time(costs), rows, measured_with};
}

std::string to_text(const CostProfile& profile) {
  std::ostringstream out;
  out << std::setprecision(17) << kMagic << " 1\n"
      << "forward_seconds_per_sample " << profile.forward_per_sample << "\n"
      << "backward_input_seconds_per_sample " << profile.backward_input_per_sample << "\n"
      << "backward_weight_seconds_per_sample " << profile.backward_weight_per_sample << "\n"
      << "message_seconds " << profile.message_seconds << "\n"
      << "microbatch_rows " << profile.microbatch_rows << "\n";
  if (!profile.measured_with.empty()) out << "measured_with " << profile.measured_with << "\n";
  return out.str();
}

CostProfile parse_cost_profile(const std::string& content, const std::string& source) {
  CostProfile profile;
  const std::map<std::string, double*> fields = {{"forward_seconds_per_sample", &profile.forward_per_sample},
                                                 {"backward_input_seconds_per_sample", &profile.backward_input_per_sample},
                                                 {"backward_weight_seconds_per_sample", &profile.backward_weight_per_sample},
                                                 {"message_seconds", &profile.message_seconds}};
  std::map<std::string, int> seen;
  std::istringstream lines(content);
  std::string text;
  for (int line = 1; std::getline(lines, text); ++line) {
    std::istringstream in(text.substr(0, text.find('#')));
    std::string key;
    if (!(in >> key)) continue;
    if (++seen[key] > 1) throw bad(source, line, "duplicate key " + key);
    if (key == kMagic) {
      if (number(source, line, key, in) != 1) throw bad(source, line, "unsupported version (expected 1)");
    } else if (key == "microbatch_rows") {
      profile.microbatch_rows = number(source, line, key, in);
      if (!(profile.microbatch_rows > 0)) throw bad(source, line, "microbatch_rows must be positive");
    } else if (key == "measured_with") {
      std::getline(in >> std::ws, profile.measured_with);
    } else if (fields.count(key)) {
      *fields.at(key) = number(source, line, key, in);
    } else {
      throw bad(source, line, "unknown key '" + key + "'");
    }
  }
  if (!seen.count(kMagic)) throw bad(source, 0, std::string("missing the '") + kMagic + " 1' line");
  for (const auto& field : fields)
    if (!seen.count(field.first)) throw bad(source, 0, "missing " + field.first);
  if (!(profile.forward_per_sample > 0)) throw bad(source, 0, "forward_seconds_per_sample must be positive");
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
