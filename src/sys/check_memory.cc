// Scheduler and memory: RT throttling, transparent huge pages, swap.

#include <fmt/format.h>

#include "core/parse.h"
#include "sys/check_internal.h"

namespace rtpulse::sys::checks {
namespace {

std::string KibText(int64_t kib) {
  if (kib >= 1024 * 1024 && kib % (1024 * 1024) == 0) return fmt::format("{} GiB", kib >> 20);
  if (kib >= 1024) return fmt::format("{} MiB", (kib + 512) / 1024);
  return fmt::format("{} KiB", kib);
}

std::vector<std::string> Words(std::string_view line) {
  std::vector<std::string> words;
  size_t pos = 0;
  while ((pos = line.find_first_not_of(" \t", pos)) != std::string_view::npos) {
    const size_t end = std::min(line.find_first_of(" \t", pos), line.size());
    words.emplace_back(line.substr(pos, end - pos));
    pos = end;
  }
  return words;
}

}  // namespace

CheckResult RtThrottling(const CheckContext& c) {
  constexpr const char* kWhy =
      "with RT throttling on, real-time tasks that use more than runtime/period of a CPU are "
      "stopped for the rest of the period (50 ms of every second by default), which a busy "
      "real-time thread sees as a 50 ms gap; off, a runaway real-time thread can starve its CPU, "
      "so keep a watchdog";
  const auto runtime = ReadInt(c.root, "/proc/sys/kernel/sched_rt_runtime_us");
  const auto period = ReadInt(c.root, "/proc/sys/kernel/sched_rt_period_us");
  if (!runtime) return Info("unknown: /proc/sys/kernel/sched_rt_runtime_us unreadable", kWhy);
  if (*runtime < 0) return Pass("kernel.sched_rt_runtime_us = -1 (no throttling)", kWhy);
  std::string found = fmt::format("kernel.sched_rt_runtime_us = {}", *runtime);
  if (period && *period > 0) {
    found += fmt::format(" of sched_rt_period_us = {} ({:.0f}% of each period)", *period,
                         100.0 * static_cast<double>(*runtime) / static_cast<double>(*period));
  }
  return Warn(found, kWhy,
              "sysctl -w kernel.sched_rt_runtime_us=-1; persist: echo "
              "'kernel.sched_rt_runtime_us = -1' > /etc/sysctl.d/90-realtime.conf");
}

CheckResult TransparentHugePages(const CheckContext& c) {
  constexpr const char* kWhy =
      "with THP 'always', a page fault may allocate, zero and compact memory for a huge page, and "
      "khugepaged collapses pages in the background: millisecond stalls the application did not "
      "ask for";
  const auto enabled = c.root.ReadLine("/sys/kernel/mm/transparent_hugepage/enabled");
  if (!enabled) return Pass("no /sys/kernel/mm/transparent_hugepage: THP not built in", kWhy);
  const size_t open = enabled->find('[');
  const size_t close = enabled->find(']', open);
  if (open == std::string::npos || close == std::string::npos) {
    return Info("unknown: transparent_hugepage/enabled reads '" + *enabled + "'", kWhy);
  }
  const std::string mode = enabled->substr(open + 1, close - open - 1);
  const std::string found = fmt::format("{} ({})", mode, *enabled);
  if (mode == "always") {
    return Warn(found, kWhy,
                "echo never > /sys/kernel/mm/transparent_hugepage/enabled (persist: " +
                    c.BootParamFix("transparent_hugepage=never") + ")");
  }
  if (mode == "madvise") return Pass(found + ": only regions that ask get huge pages", kWhy);
  return Pass(found, kWhy);
}

CheckResult Swap(const CheckContext& c) {
  constexpr const char* kWhy =
      "a page that was swapped out costs a disk read (milliseconds) when it is next touched; "
      "rtpulse locks its own memory, but the services a real-time application relies on may not";
  const auto text = c.root.Read("/proc/swaps");
  if (!text) return Info("unknown: /proc/swaps unreadable", kWhy);
  std::vector<std::string> devices;
  bool dphys = false;
  bool zram = false;
  size_t pos = text->find('\n');  // skip the header
  while (pos != std::string::npos && pos + 1 < text->size()) {
    const size_t end = std::min(text->find('\n', pos + 1), text->size());
    const auto words = Words(std::string_view(*text).substr(pos + 1, end - pos - 1));
    pos = end < text->size() ? end : std::string::npos;
    if (words.size() < 4) continue;
    const auto size = ParseInt(words[2], "size");
    const auto used = ParseInt(words[3], "used");
    devices.push_back(fmt::format("{} ({}, {}, {} used)", words[0], words[1],
                                  size ? KibText(*size) : words[2],
                                  used ? KibText(*used) : words[3]));
    dphys = dphys || words[0] == "/var/swap";
    zram = zram || words[0].find("zram") != std::string::npos;
  }
  if (devices.empty()) return Pass("no active swap", kWhy);
  std::string fix = "swapoff -a, and remove the swap entries from /etc/fstab";
  if (dphys) fix += "; Raspberry Pi OS: systemctl disable --now dphys-swapfile";
  if (zram) fix += "; zram swap: disable the service that sets it up (zramswap, rpi-swap)";
  return Warn("active: " + Join(devices, ", "), kWhy, std::move(fix));
}

}  // namespace rtpulse::sys::checks
