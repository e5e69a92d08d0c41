#include "core/runtime/numeric_check.h"

#include <cmath>
#include <sstream>
#include <vector>

namespace sluice::runtime {

std::optional<Error> non_finite_in_step(const std::map<int, std::unique_ptr<model::StageModule>>& stages,
                                        kernels::Backend& backend, double loss_sum, bool holds_loss, int64_t rows) {
  if (holds_loss && !std::isfinite(loss_sum)) {
    return Error(ErrorCode::kNumeric, "non-finite loss (" + std::to_string(loss_sum) + ") of this step's samples");
  }
  if (holds_loss && rows > 0 && !std::isfinite(static_cast<float>(loss_sum / static_cast<double>(rows)))) {
    std::ostringstream mean;
    mean << loss_sum / static_cast<double>(rows);
    return Error(ErrorCode::kNumeric, "loss (mean over " + std::to_string(rows) + " samples " + mean.str() +
                                          ") of this step's samples overflows a float");
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
