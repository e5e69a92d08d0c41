#include "core/comm/rank_zero_decides.h"

#include <exception>

namespace sluice::comm {

Decision rank_zero_decides(MPI_Comm comm, const std::string& what, const std::function<Decision()>& decide) {
  int rank = 0;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) {
    throw Error(ErrorCode::kComm, what + ": the communicator is not usable (MPI_Comm_rank failed)");
  }
  Decision decision;
  std::exception_ptr failure;
  if (rank == 0) {
    try {
      decision = decide();
    } catch (...) {
      failure = std::current_exception();
    }
  }
  // Rank 0 decides before it reports: the others' wait for the verdict (bounded by more than comm.timeout,
  // agreement.cc) covers the decision, and rank 0's own wait for their reports starts after it.
  const Verdict verdict = agree_on_decision(comm, what, as_error(failure), decision);
  if (!verdict.error) return decision;
  if (failure && verdict.origin == rank) std::rethrow_exception(failure);
  throw *verdict.error;
}

}  // namespace sluice::comm
