#include "core/runtime/preemption.h"

#include <csignal>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

// The only state a handler may touch: a lock-free flag of the type the C standard blesses for handlers.
volatile std::sig_atomic_t g_preemption_signalled = 0;

extern "C" void record_preemption_signal(int /*signal_number*/) { g_preemption_signalled = 1; }

void install_flag_handler(int signal_number, const char* signal_name) {
  struct sigaction action {};
  action.sa_handler = record_preemption_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  if (sigaction(signal_number, &action, nullptr) != 0) {
    throw Error(ErrorCode::kInternal, std::string("preemption: sigaction failed for ") + signal_name);
  }
}

}  // namespace

void install_preemption_handlers() {
  install_flag_handler(SIGUSR1, "SIGUSR1");
  install_flag_handler(SIGTERM, "SIGTERM");
}

bool preemption_requested() { return g_preemption_signalled != 0; }

void clear_preemption_request() { g_preemption_signalled = 0; }

bool agree_to_stop(comm::Group& world) { return world.any(preemption_requested()); }

}  // namespace sluice::runtime
