#include "core/runtime/gradient_sum_choice.h"

#include "core/common/error.h"
#include "core/config/transport_kind.h"

namespace sluice::runtime {

using config::GradientSumKind;

GradientSumKind choose_gradient_sum(GradientSumKind requested, const std::string& transport_summary) {
  const bool nccl_everywhere = transport_summary == config::transport_kind_name(config::TransportKind::kNccl);
  switch (requested) {
    case GradientSumKind::kOrdered:
      return GradientSumKind::kOrdered;
    case GradientSumKind::kAuto:
      return nccl_everywhere ? GradientSumKind::kNccl : GradientSumKind::kOrdered;
    case GradientSumKind::kNccl:
      break;
  }
  if (nccl_everywhere) return GradientSumKind::kNccl;
  throw Error(ErrorCode::kConfig,
              "pipeline.gradient_sum: nccl needs every rank on a GPU of its own with NCCL (pipeline.transport "
              "nccl), but this job's transport is " + transport_summary + "; use ordered or auto");
}

}  // namespace sluice::runtime
