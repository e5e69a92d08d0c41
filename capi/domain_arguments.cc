#include "capi/domain_arguments.h"

#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/sample_shape.h"

namespace sluice::capi {

namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw Error(ErrorCode::kInvalidArgument, message);
}

}  // namespace

runtime::DeclaredDomain read_declared_domain(const config::Config& cfg, int ndims, const int64_t* global_extent,
                                             const int64_t* block_offset, const int64_t* block_extent) {
  require(global_extent != nullptr, "global_extent (const int64_t*) is NULL");
  require(block_offset != nullptr, "block_offset (const int64_t*) is NULL");
  require(block_extent != nullptr, "block_extent (const int64_t*) is NULL");
  const config::SampleShape input = config::input_shape_of(cfg.model);
  const int dims = config::is_field(input) ? static_cast<int>(input.size()) - 1 : 0;
  // The count first: the arrays are read only once it is known to be the model's.
  if (dims > 0) {
    require(ndims == dims, "ndims " + std::to_string(ndims) + " is not the number of spatial dimensions of the "
                           "model's input (model.inputs has " + std::to_string(dims) + " after the channels)");
  }
  const size_t n = static_cast<size_t>(dims);
  runtime::DeclaredDomain declared{std::vector<int64_t>(global_extent, global_extent + n),
                                   config::DomainBox{std::vector<int64_t>(block_offset, block_offset + n),
                                                     std::vector<int64_t>(block_extent, block_extent + n)}};
  const std::string problem = runtime::declared_domain_problem(cfg, declared);
  require(problem.empty(), problem);
  return declared;
}

}  // namespace sluice::capi
