// sluice-checkpoint-probe: reads one checkpoint file whole, with the library's own reader (open, structure against
// the manifest, every dataset and its checksum), so that the library can learn in a separate process whether
// libhdf5 survives the file before opening it in the host (checkpoint/isolated_read.h). Installed as
// PREFIX/libexec/sluice/sluice-checkpoint-probe.
//
//   sluice-checkpoint-probe [--report-fd N] [--] FILE
//
// With --report-fd the outcome goes to descriptor N (core/common/child_report.h) and the exit status is 0 unless
// the probe itself could not run; without it, an error is printed on stderr and the exit status is 1. A crash in
// libhdf5 kills this process by its signal, which is the point.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "checkpoint/reader.h"
#include "core/common/child_report.h"

#if defined(__SANITIZE_ADDRESS__)
// Under --config=asan: a crash inside libhdf5 (SIGSEGV, SIGBUS, SIGFPE) must still end the probe by its signal, as in a normal build (ASan's
// own SIGSEGV handler would print a report and exit 1, and the caller could not tell a crash from a probe failure).
extern "C" const char* __asan_default_options() { return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0"; }
#endif

namespace {

int usage() {
  std::cerr << "usage: sluice-checkpoint-probe [--report-fd N] [--] FILE\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int report_fd = -1;
  const char* file = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--report-fd") == 0 && i + 1 < argc && file == nullptr) {
      report_fd = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--") == 0 && i + 1 < argc && file == nullptr) {
      file = argv[++i];
    } else if (file == nullptr && argv[i][0] != '-') {
      file = argv[i];
    } else {
      return usage();
    }
  }
  if (file == nullptr || report_fd == 0 || report_fd == 1 || report_fd == 2) return usage();
  // Serial open (no communicator, no MPI_Init): the same checks as every rank's Reader plus verify_all.
  const std::string report = sluice::run_and_report([&] { sluice::checkpoint::Reader(file).verify_all(); });
  if (report_fd > 0) {
    sluice::send_report(report_fd, report);
    return 0;
  }
  if (report.size() > 1) {
    std::cerr << "sluice-checkpoint-probe: " << report.substr(report[0] == 1 ? 2 : 1) << "\n";
    return 1;
  }
  return 0;
}
