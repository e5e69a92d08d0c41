#include "core/runtime/numeric_check.h"

#include <cmath>
#include <vector>

namespace sluice::runtime {

std::string first_non_finite(const float* data, int64_t rows, int64_t features, const char* what) {
  if (data == nullptr) return "";
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < features; ++f) {
      const float v = data[r * features + f];
      if (!std::isfinite(v)) {
        return std::string("non-finite value (") + (std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf") + ") in the " +
               what + " of sample " + std::to_string(r) + " (feature " + std::to_string(f) + ")";
      }
    }
  }
  return "";
}

std::optional<Error> non_finite_in_step(const std::map<int, std::unique_ptr<model::StageModule>>& stages,
                                        kernels::Backend& backend, double loss_sum, bool holds_loss) {
  if (holds_loss && !std::isfinite(loss_sum)) {
    return Error(ErrorCode::kNumeric, "non-finite loss (" + std::to_string(loss_sum) + ") of this step's samples");
  }
  // Gradients flow from the loss towards layer 0, so a non-finite value that arose in layer L spreads to the
  // layers before it: the last non-finite one in model order is where it arose (on this rank).
  std::string offender;
  for (const auto& [index, stage] : stages) {
    for (model::Parameter* p : stage->parameters()) {
      if (!std::isfinite(backend.sum_of_squares(p->grad))) offender = p->qualified_name();
    }
  }
  if (offender.empty()) return std::nullopt;
  return Error(ErrorCode::kNumeric, "non-finite gradient of " + offender);
}

}  // namespace sluice::runtime
