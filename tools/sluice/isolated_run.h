// Runs a piece of work in a forked child process, so a crash or hang inside a library the work calls (libhdf5
// 1.10.8 segfaults on some crafted files: tests/fuzz/hdf5_crashes) becomes a clear Error in the calling process
// instead of taking it down. The report protocol and the bounded wait are core/common/child_report.h, shared with
// the library's checkpoint probe. The child shares stdout/stderr, so what the work prints passes straight through;
// an Error it throws comes back with its code and message. Fork only where no MPI is initialized (inspect): the
// child only runs `work` and leaves with _exit (no atexit handlers, no MPI calls).
#pragma once

#include <functional>
#include <string>

namespace sluice::tools {

// Runs `work` in a child and waits at most `timeout_seconds` for it. Rethrows the child's sluice::Error as is.
// Throws Error(kCheckpoint) "<subject>: the HDF5 library crashed (signal N) reading it; ..." when the child dies
// by a signal, and Error(kTimeout) naming subject and timeout after killing (SIGKILL) a child that did not
// finish in time. `subject` names what was being read (the file) in those messages.
void run_isolated(const std::function<void()>& work, const std::string& subject, double timeout_seconds);

}  // namespace sluice::tools
