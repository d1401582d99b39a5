// tracefs for the tests that trace (--explain, timerlat, the trace session): one place that
// mounts it when it is not mounted yet, so no test skips (or runs) depending on which test
// ran first on a freshly booted machine.
#pragma once

#include <string>

namespace rtpulse::testutil {

inline constexpr const char* kTracefsDir = "/sys/kernel/tracing";

/// Why tracing cannot be tested here, "" when it can: root, and tracefs at kTracefsDir,
/// mounted here if it is not yet (a booted VM has none until something mounts it).
std::string TracefsUnavailable();

}  // namespace rtpulse::testutil
