#include "core/runtime/placement.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

// Reads a local-rank variable; false when it is unset. A malformed value is an error rather than "unset":
// silently falling back to 0 would put every rank of a node on GPU 0.
bool read_local_rank_variable(const char* name, int* value) {
  const char* text = std::getenv(name);
  if (text == nullptr) return false;
  errno = 0;
  char* end = nullptr;
  const long parsed = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || parsed < 0 || parsed > INT_MAX) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("placement: environment variable ") + name + "=\"" + text +
                    "\" is not a non-negative integer (the node-local rank)");
  }
  *value = static_cast<int>(parsed);
  return true;
}

}  // namespace

int node_local_rank() {
  int local_rank = 0;
  if (read_local_rank_variable("SLURM_LOCALID", &local_rank)) return local_rank;
  if (read_local_rank_variable("OMPI_COMM_WORLD_LOCAL_RANK", &local_rank)) return local_rank;
  return 0;
}

}  // namespace sluice::runtime
