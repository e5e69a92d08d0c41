#include "core/runtime/loaded_values.h"

#include <cstdint>
#include <sstream>

#include "core/common/error.h"
#include "core/common/non_finite.h"

namespace sluice::runtime {
namespace {

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

void check_loaded_values(const std::string& file, const std::string& path, const float* values, size_t count) {
  const std::string where = "checkpoint '" + file + "', dataset " + path + ": ";
  const std::string problem = first_non_finite(values, static_cast<int64_t>(count), "its values");
  if (!problem.empty()) throw Error(ErrorCode::kCheckpoint, where + problem);
  // AdamW's second moment is a running mean of squares: a negative one cannot come from training.
  if (!ends_with(path, "/exp_avg_sq")) return;
  for (size_t i = 0; i < count; ++i) {
    if (values[i] < 0.0f) {
      std::ostringstream value;
      value << values[i];
      throw Error(ErrorCode::kCheckpoint, where + "negative value (" + value.str() + ") at index " +
                                              std::to_string(i) + " of an AdamW second moment (must be >= 0)");
    }
  }
}

}  // namespace sluice::runtime
