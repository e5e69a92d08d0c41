#include "core/runtime/nccl_support.h"

#include <utility>

namespace sluice::runtime {
namespace {

// Function-local static: registration runs from another library's static initialiser, whose order relative
// to this file's statics is unspecified.
std::unique_ptr<NcclSupport>& slot() {
  static std::unique_ptr<NcclSupport> support;
  return support;
}

}  // namespace

bool register_nccl_support(NcclSupport support) {
  slot() = std::make_unique<NcclSupport>(std::move(support));
  return true;
}

const NcclSupport* nccl_support() { return slot().get(); }

}  // namespace sluice::runtime
