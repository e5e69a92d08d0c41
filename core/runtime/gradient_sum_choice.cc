#include "core/runtime/gradient_sum_choice.h"

#include "core/common/error.h"

namespace sluice::runtime {

std::string choose_gradient_sum(const std::string& requested, const std::string& transport_summary) {
  const bool nccl_everywhere = transport_summary == "nccl";
  if (requested == "ordered") return "ordered";
  if (requested == "auto") return nccl_everywhere ? "nccl" : "ordered";
  if (requested == "nccl") {
    if (nccl_everywhere) return "nccl";
    throw Error(ErrorCode::kConfig,
                "pipeline.gradient_sum: nccl needs every rank on a GPU of its own with NCCL (pipeline.transport "
                "nccl), but this job's transport is " + transport_summary + "; use ordered or auto");
  }
  throw Error(ErrorCode::kConfig, "pipeline.gradient_sum must be auto, ordered or nccl, got '" + requested + "'");
}

}  // namespace sluice::runtime
