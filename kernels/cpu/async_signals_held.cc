#include "kernels/cpu/async_signals_held.h"

#include <pthread.h>

namespace sluice::kernels {
namespace {

sigset_t asynchronous_signals() {
  sigset_t set;
  sigfillset(&set);
  constexpr int kSynchronous[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
  for (int synchronous : kSynchronous) sigdelset(&set, synchronous);
  return set;
}

}  // namespace

AsyncSignalsHeld::AsyncSignalsHeld() {
  static const sigset_t held = asynchronous_signals();
  // pthread_sigmask fails only for an invalid `how`; if it ever did, the scope would hold nothing rather than throw
  // from a kernel.
  held_ = pthread_sigmask(SIG_BLOCK, &held, &previous_) == 0;
}

AsyncSignalsHeld::~AsyncSignalsHeld() {
  if (held_) pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace sluice::kernels
