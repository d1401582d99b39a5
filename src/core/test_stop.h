#pragma once

// Named moments where a test can freeze rtpulse to SIGKILL it at exactly that point (the
// windows between a restore and the record of it, docs/suite.md). Only with the
// RTPULSE_TEST_STOP_AT environment variable set; otherwise nothing happens.

#include <signal.h>

#include <cstdlib>
#include <string_view>

namespace rtpulse {

/// The environment variable naming the moment: `RTPULSE_TEST_STOP_AT=POINT`.
inline constexpr const char* kTestStopAtVariable = "RTPULSE_TEST_STOP_AT";

/// Stops the whole process (SIGSTOP) when RTPULSE_TEST_STOP_AT names `point`; the test sees
/// it with waitpid(WUNTRACED), then sends SIGKILL or SIGCONT.
inline void TestStopAt(std::string_view point) {
  const char* wanted = std::getenv(kTestStopAtVariable);
  if (wanted != nullptr && point == wanted) ::raise(SIGSTOP);
}

}  // namespace rtpulse
