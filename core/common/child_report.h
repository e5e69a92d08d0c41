// How a process that read a file on Sluice's behalf tells the caller how it ended, and how the caller turns that
// into an Error. One mechanism for both isolated readers: `sluice inspect` (a forked child,
// tools/sluice/isolated_run.h) and the library's checkpoint probe (a spawned executable,
// checkpoint/isolated_read.h). libhdf5 1.10.8 crashes or loops on some crafted files (tests/fuzz/hdf5_crashes);
// reading such a file in a child turns the crash or the hang into a clear Error in the caller.
//
// The report, written to a pipe: one status byte (0 = done, 1 = sluice::Error, 2 = other exception), then for 1
// the ErrorCode as a byte, then the message. A child that dies before writing it leaves an empty report.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

namespace sluice {

// Child side: runs `work` and returns the report of how it ended (never throws).
std::string run_and_report(const std::function<void()>& work);
// Child side: writes `report` whole to `fd` (a caller gone meanwhile is ignored) and closes it.
void send_report(int fd, const std::string& report);

// Parent side: reads `child`'s report from `report_fd` (the pipe's read end, closed here) until the child closes
// it, waiting at most `timeout_seconds` (<= 0: no bound) without spinning, then reaps the child. Returns normally
// when the child reported success. Throws:
//  - Error(kCheckpoint) "<subject>: the HDF5 library crashed (signal N, NAME) reading it; the file is corrupt or
//    not a Sluice checkpoint" when the child died of a fault (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP,
//    SIGSYS);
//  - Error(kIo) "<subject>: the reading process was killed (signal N, NAME) before it finished ..." when another
//    signal ended it (the OOM killer, the job ending): that says nothing about the file;
//  - the child's own Error (its code and message) when it reported one;
//  - Error(kTimeout) "<subject>: reading it did not finish within N s (<timeout_source>); the reading process was
//    killed ..." after killing (SIGKILL) and reaping a child still running at the deadline;
//  - Error(kInternal) naming subject and exit status when the child exited without a report or with a malformed
//    one.
// Reaping is bounded too (10 s after the report or the kill): a child reaped elsewhere (SIGCHLD ignored by the
// host) or stuck in the kernel is left behind, and a child that reported but hangs in its exit handlers is killed
// with its verdict kept.
void await_report(pid_t child, int report_fd, const std::string& subject, double timeout_seconds,
                  const std::string& timeout_source);

}  // namespace sluice
