#include "core/common/log.h"

#include <iostream>
#include <mutex>

namespace sluice::log {
namespace {

// One lock for configuration and delivery: a message never reaches a sink that is being replaced, and a host's
// sink is never entered by two threads at once (it need not be thread-safe).
std::mutex g_mutex;
Sink g_sink;
int g_max_level = static_cast<int>(Level::kWarning);

const char* name(Level level) {
  switch (level) {
    case Level::kError: return "error";
    case Level::kWarning: return "warning";
    case Level::kInfo: return "info";
    case Level::kDebug: return "debug";
  }
  return "message";
}

}  // namespace

void configure(Sink sink, int max_level) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_sink = std::move(sink);
  g_max_level = max_level;
}

void reset() { configure(Sink(), static_cast<int>(Level::kWarning)); }

void message(Level level, const std::string& text) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (static_cast<int>(level) > g_max_level) return;
  if (!g_sink) {
    std::cerr << "sluice: " << name(level) << ": " << text << std::endl;
    return;
  }
  try {
    g_sink(level, text);
  } catch (...) {
    // A host sink that throws must not turn a message into a failure of the call that logged it.
  }
}

}  // namespace sluice::log
