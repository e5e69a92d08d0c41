#include "core/comm/wait_settings.h"

#include <mutex>

namespace sluice::comm {
namespace {

std::mutex g_mutex;
WaitSettings g_settings;

}  // namespace

WaitSettings wait_settings() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_settings;
}

void set_wait_settings(const WaitSettings& settings) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_settings = settings;
  if (g_settings.policy == WaitPolicy::kAuto) g_settings.policy = WaitPolicy::kBlock;
}

Deadline step_deadline() { return Deadline::after(wait_settings().timeout_seconds); }

Deadline arrival_deadline() { return Deadline::after(wait_settings().arrival_timeout_seconds); }

}  // namespace sluice::comm
