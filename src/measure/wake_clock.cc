#include "measure/wake_clock.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/clock.h"
#include "core/parse.h"
#include "core/printable.h"

namespace rtpulse::measure {
namespace {

struct NamedClock {
  std::string_view name;
  clockid_t id;
};

constexpr NamedClock kNamedClocks[] = {{"monotonic", CLOCK_MONOTONIC},
                                       {"realtime", CLOCK_REALTIME},
                                       {"boottime", CLOCK_BOOTTIME},
                                       {"tai", CLOCK_TAI}};

bool IsAux(clockid_t clock) {
  return clock >= kFirstAuxClock && clock < kFirstAuxClock + kAuxClocks;
}

}  // namespace

Expected<clockid_t> ParseWakeClock(std::string_view text) {
  if (text == "0") return CLOCK_MONOTONIC;
  if (text == "1") return CLOCK_REALTIME;
  for (const auto& c : kNamedClocks) {
    if (text == c.name) return c.id;
  }
  if (text.size() == 4 && text.substr(0, 3) == "aux" && text[3] >= '0' &&
      text[3] < static_cast<char>('0' + kAuxClocks)) {
    return kFirstAuxClock + (text[3] - '0');
  }
  return UsageError(fmt::format(
      "-c {}: not a clock: give 0 or monotonic (the default), 1 or realtime (cyclictest's two), "
      "boottime, tai, or aux0..aux7",
      Printable(std::string(text))));
}

std::string WakeClockName(clockid_t clock) {
  for (const auto& c : kNamedClocks) {
    if (clock == c.id) return std::string(c.name);
  }
  if (IsAux(clock)) return fmt::format("aux{}", clock - kFirstAuxClock);
  return fmt::format("clock {}", clock);
}

Status CheckWakeClock(clockid_t clock) {
  const std::string name = WakeClockName(clock);
  // clock_gettime, not clock_getres: a kernel with auxiliary clocks answers getres for every
  // one of them, and only a clock that is enabled can be read.
  timespec now{};
  if (clock_gettime(clock, &now) != 0) {
    const int error = errno;
    if (IsAux(clock)) {
      const int n = clock - kFirstAuxClock;
      const bool configured = ::access("/sys/kernel/time/aux_clocks", F_OK) == 0;
      return ResourceError(fmt::format(
          "-c {}: this kernel has no auxiliary clock {} running (clock_gettime: {}); it needs "
          "Linux 6.17 or later built with CONFIG_POSIX_AUX_CLOCKS{} and the clock enabled: "
          "echo 1 > /sys/kernel/time/aux_clocks/{}/aux_clock_enable",
          name, n, std::strerror(error),
          configured ? "" : " (this one has no /sys/kernel/time/aux_clocks)", n));
    }
    return ResourceError(
        fmt::format("-c {}: this kernel has no such clock ({})", name, std::strerror(error)));
  }
  // A deadline in the past returns at once where the kernel can sleep on the clock.
  const timespec past{0, 1};
  if (const int rc = clock_nanosleep(clock, TIMER_ABSTIME, &past, nullptr); rc != 0) {
    return ResourceError(fmt::format(
        "-c {}: this kernel reads the clock but cannot sleep on it (clock_nanosleep: {}); "
        "use monotonic or realtime",
        name, std::strerror(rc)));
  }
  return Status::Ok();
}

ClockResolution MeasureClockResolution(clockid_t clock) {
  ClockResolution out;
  timespec res{};
  if (clock_getres(clock, &res) == 0) out.reported_ns = res.tv_sec * kNsPerSec + res.tv_nsec;
  constexpr int64_t kWindowNs = kNsPerMs;
  constexpr int64_t kMaxReads = 100'000;
  int64_t smallest = 0;
  int64_t previous = ClockNs(clock);
  const int64_t end = previous + kWindowNs;
  while (out.reads < kMaxReads) {
    const int64_t now = ClockNs(clock);
    ++out.reads;
    const int64_t step = now - previous;
    if (step > 0 && (smallest == 0 || step < smallest)) smallest = step;
    previous = now;
    if (now >= end) break;
  }
  out.measured_ns = smallest;
  return out;
}

std::optional<std::string> ClockResolutionWarning(const ClockResolution& r, std::string_view name) {
  if (r.measured_ns == 0) {
    return fmt::format(
        "-R: the {} clock returned the same time for {} consecutive reads: it steps more "
        "coarsely than a millisecond, so latencies finer than that are not measured",
        name, r.reads);
  }
  if (r.measured_ns > kNsPerUs || r.reported_ns > kNsPerUs) {
    return fmt::format(
        "-R: the {} clock steps by about {} ns (the kernel reports {} ns): latencies are "
        "measured no finer than that",
        name, std::max(r.measured_ns, r.reported_ns), r.reported_ns);
  }
  return std::nullopt;
}

}  // namespace rtpulse::measure
