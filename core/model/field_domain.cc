#include "core/model/field_domain.h"

#include "core/common/error.h"

namespace sluice::model {

int64_t FieldDomain::block_points() const {
  int64_t points = 1;
  for (const int64_t e : block_extent()) points *= e;
  return points;
}

namespace {

std::string extents_text(const std::vector<int64_t>& extents) {
  std::string text = "[";
  for (size_t d = 0; d < extents.size(); ++d) text += (d > 0 ? ", " : "") + std::to_string(extents[d]);
  return text + "]";
}

}  // namespace

void check_domain_level(const FieldDomain& domain, const std::vector<int64_t>& global, const std::string& layer) {
  if (global != domain.global_extent()) {
    throw Error(ErrorCode::kInvalidArgument, layer + " runs on a field of extents " + extents_text(global) +
                                                 " but its domain level is " + extents_text(domain.global_extent()));
  }
}

}  // namespace sluice::model
