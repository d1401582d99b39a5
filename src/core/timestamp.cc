#include "core/timestamp.h"

#include <fmt/format.h>

#include "core/clock.h"

namespace rtpulse {

std::string UtcIsoSeconds(int64_t realtime_ns) {
  if (realtime_ns <= 0) return "";
  const auto seconds = static_cast<std::time_t>(realtime_ns / kNsPerSec);
  std::tm utc{};
  if (gmtime_r(&seconds, &utc) == nullptr) return "";
  char text[64];
  if (std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc) == 0) return "";
  return text;
}

std::string UtcIsoMillis(int64_t realtime_ns) {
  std::string seconds = UtcIsoSeconds(realtime_ns);
  if (seconds.empty()) return seconds;
  seconds.pop_back();  // the Z, after the fraction
  return fmt::format("{}.{:03}Z", seconds, (realtime_ns % kNsPerSec) / kNsPerMs);
}

std::string RunFolderStamp(std::time_t now) {
  std::tm local{};
  if (localtime_r(&now, &local) == nullptr) return "unknown_time";
  char text[64];
  if (std::strftime(text, sizeof(text), "%Y%m%d_%H%M%S", &local) == 0) return "unknown_time";
  return text;
}

}  // namespace rtpulse
