#include "core/run_cap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/printable.h"

namespace rtpulse {

Expected<std::optional<int64_t>> MaxRunNs() {
  const char* text = std::getenv(kMaxRunEnv);
  if (text == nullptr || *text == '\0') return std::optional<int64_t>{};
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  // At least 1 ms: a cap that rounds to 0 ns would read as "no end" where a duration of 0
  // means that (latency -D 0).
  if (end == text || *end != '\0' || !std::isfinite(seconds) || seconds < 0.001 || seconds > 1e9) {
    return UsageError(fmt::format(
        "{}='{}' is not a number of seconds from 0.001 up (a test aid that caps how long a "
        "command measures; unset it for a full run)",
        kMaxRunEnv, Printable(text)));
  }
  return std::optional<int64_t>{static_cast<int64_t>(std::llround(seconds * 1e9))};
}

std::string MaxRunWarning(std::string_view what, std::string_view asked, std::string_view capped) {
  const char* value = std::getenv(kMaxRunEnv);
  return fmt::format("{}={}: {} capped from {} to {} (a test aid: the run is shorter than asked)",
                     kMaxRunEnv, value != nullptr ? value : "", what, asked, capped);
}

Status CapRunDuration(int64_t& duration_ns, std::string_view option, std::string_view asked,
                      std::vector<std::string>& notes) {
  auto cap = MaxRunNs();
  if (!cap) return cap.error();
  if (!*cap || (duration_ns != 0 && duration_ns <= **cap)) return Status::Ok();
  notes.push_back(MaxRunWarning(option, asked, MaxRunSeconds(**cap)));
  duration_ns = **cap;
  return Status::Ok();
}

Status CapRunCount(uint64_t& count, double item_ns, std::string_view option, std::string_view unit,
                   std::vector<std::string>& notes) {
  auto cap = MaxRunNs();
  if (!cap) return cap.error();
  if (!*cap) return Status::Ok();
  const auto most =
      std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<double>(**cap) / item_ns));
  if (most >= count) return Status::Ok();
  notes.push_back(MaxRunWarning(
      option, fmt::format("{} {}", count, unit),
      fmt::format("{} {} ({})", most, unit,
                  MaxRunSeconds(static_cast<int64_t>(static_cast<double>(most) * item_ns)))));
  count = most;
  return Status::Ok();
}

std::string MaxRunSeconds(int64_t ns) {
  return fmt::format("{} s", static_cast<double>(ns) / 1e9);
}

}  // namespace rtpulse
