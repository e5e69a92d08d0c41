// MPI_Finalize under a bound, like every other wait. Finalize is a wait on the MPI library's own shutdown (Open
// MPI's is collective; MPICH over UCX runs a PMI barrier in it), and on a sick network it can block after the
// job's work is done and saved: measured with Debian's MPICH 4.0.2 / UCX 1.13 across network namespaces, where
// most runs of a bare MPI program never return from it (docs/SLURM.md, "MPICH"). A rank that has
// finished its work must not turn into a hung job.
#pragma once

#include <functional>
#include <string>

namespace sluice::comm {

// Runs `action`. If it has not returned after `timeout_s` seconds (> 0; 0 = no bound), writes
// "<who>: <what> did not return within T s; exiting with status S (everything was saved before it)" to stderr
// and ends the process at once with `exit_status` (_exit: no static destructors, which might call into a library
// that is stuck). Returns normally when `action` does.
void run_bounded_or_exit(const std::function<void()>& action, double timeout_s, int exit_status,
                         const std::string& who, const std::string& what);

// MPI_Finalize through run_bounded_or_exit: the status is the one the process was about to exit with. Used by
// `sluice train`; a C or Fortran host program calls MPI_Finalize itself, outside Sluice's reach.
void finalize_bounded(double timeout_s, int exit_status, const std::string& who);

}  // namespace sluice::comm
