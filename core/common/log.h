// Where the library's own messages (warnings, progress a host may want) go. Process-wide: the host decides
// once (sluice_set_log) what Sluice prints, for every trainer. Until it does, warnings and errors go to stderr
// prefixed "sluice: ", as before there was a choice.
#pragma once

#include <functional>
#include <string>

namespace sluice::log {

enum class Level { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

// Receives every message at or below the configured level. Must not call back into Sluice.
using Sink = std::function<void(Level, const std::string&)>;

// Replaces the sink (an empty one means stderr) and the most verbose level passed on; a level below kError
// (e.g. -1 cast) silences everything. Thread-safe; messages are delivered one at a time.
void configure(Sink sink, int max_level);

// The default: stderr, warnings and errors.
void reset();

void message(Level level, const std::string& text);
inline void warning(const std::string& text) { message(Level::kWarning, text); }
inline void info(const std::string& text) { message(Level::kInfo, text); }

}  // namespace sluice::log
