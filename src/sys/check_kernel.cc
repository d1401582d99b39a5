// Kernel checks: preemption model, configuration, tick, timers, clocksource.

#include <fmt/format.h>

#include <algorithm>

#include "core/parse.h"
#include "sys/check_internal.h"

namespace rtpulse::sys::checks {
namespace {

constexpr const char* kNoConfig = "unknown: no kernel configuration to read (see kernel.config)";

/// ID and ID_LIKE of /etc/os-release, space-joined ("raspbian debian").
std::string DistroIds(const FsRoot& root) {
  auto text = root.Read("/etc/os-release");
  if (!text) text = root.Read("/usr/lib/os-release");
  if (!text) return "";
  std::string ids;
  size_t pos = 0;
  while (pos < text->size()) {
    const size_t end = std::min(text->find('\n', pos), text->size());
    const std::string line = text->substr(pos, end - pos);
    pos = end + 1;
    for (const char* key : {"ID=", "ID_LIKE="}) {
      if (line.rfind(key, 0) != 0) continue;
      std::string value = line.substr(std::string_view(key).size());
      value.erase(std::remove(value.begin(), value.end(), '"'), value.end());
      ids += " " + value;
    }
  }
  return ids + " ";
}

std::string RtKernelFix(const CheckContext& c) {
  if (c.raspberry_pi) {
    return "build and boot a kernel with CONFIG_PREEMPT_RT=y (mainline since Linux 6.12): start "
           "from the raspberrypi/linux rpi-6.12.y tree and bcm2712_defconfig (Pi 5) or "
           "bcm2711_defconfig (Pi 4), enable CONFIG_EXPERT and CONFIG_PREEMPT_RT";
  }
  const std::string ids = DistroIds(c.root);
  if (ids.find(" ubuntu ") != std::string::npos) {
    return "pro enable realtime-kernel (Ubuntu Pro), then reboot into it";
  }
  if (ids.find(" debian ") != std::string::npos) {
    const std::string arch = c.info.machine == "x86_64"    ? "amd64"
                             : c.info.machine == "aarch64" ? "arm64"
                                                           : "$(dpkg --print-architecture)";
    return fmt::format("apt install linux-image-rt-{} and reboot into it", arch);
  }
  return "install your distribution's PREEMPT_RT kernel, or build one with CONFIG_PREEMPT_RT=y "
         "(mainline since Linux 6.12)";
}

/// ".hres_active : 1" lines of /proc/timer_list (readable by root): one per CPU.
std::optional<bool> TimerListHres(const FsRoot& root, std::string& found) {
  auto text = root.Read("/proc/timer_list");
  if (!text) return std::nullopt;
  int active = 0;
  int inactive = 0;
  size_t pos = 0;
  while ((pos = text->find(".hres_active", pos)) != std::string::npos) {
    const size_t colon = text->find(':', pos);
    if (colon == std::string::npos) break;
    const size_t value = text->find_first_not_of(' ', colon + 1);
    if (value != std::string::npos && (*text)[value] == '1') {
      ++active;
    } else {
      ++inactive;
    }
    pos = colon;
  }
  if (active + inactive == 0) return std::nullopt;
  found = fmt::format("/proc/timer_list: hres_active on {} of {} CPUs", active, active + inactive);
  return inactive == 0;
}

}  // namespace

CheckResult Preemption(const CheckContext& c) {
  const auto& info = c.info;
  std::string found = info.preemption_model;
  if (!info.preempt_dynamic_mode.empty()) {
    found += fmt::format(" running in mode '{}'", info.preempt_dynamic_mode);
  }
  if (!info.preemption_evidence.empty()) found += " (" + Join(info.preemption_evidence, "; ") + ")";
  std::string why =
      "PREEMPT_RT makes nearly all kernel code preemptible (sleeping spinlocks, threaded "
      "interrupts, priority inheritance), which bounds how long a high-priority thread waits to "
      "run; the other models leave non-preemptible kernel sections that can last milliseconds";
  if (info.preempt_rt) return Pass(found, why);
  std::string fix = RtKernelFix(c);
  const auto& mode = info.preempt_dynamic_mode;
  if (info.preemption_model == "PREEMPT_DYNAMIC" && mode != "full" && mode != "lazy") {
    fix += "; until then, the next best is full preemption: " + c.BootParamFix("preempt=full");
  }
  return Warn(found, std::move(why), std::move(fix));
}

CheckResult KernelConfigFile(const CheckContext& c) {
  constexpr const char* kWhy =
      "the preemption model, HZ, NO_HZ_FULL and high-resolution timers can only be verified "
      "from the configuration the running kernel was built with";
  if (const auto& config = c.info.kernel_config) {
    return Pass(fmt::format("{} ({} options)", config->source, config->config.size()), kWhy);
  }
  return Warn(c.info.kernel_config_problem, kWhy,
              fmt::format("modprobe configs (when built with CONFIG_IKCONFIG=m); or install this "
                          "kernel's config as /boot/config-{}; or rebuild with CONFIG_IKCONFIG=y "
                          "and CONFIG_IKCONFIG_PROC=y",
                          c.info.release));
}

CheckResult TickRate(const CheckContext& c) {
  constexpr const char* kWhy =
      "the periodic tick (HZ per second) sets the granularity of timeouts that do not use "
      "high-resolution timers and of scheduler time slices on CPUs that keep the tick; RT "
      "kernels usually run HZ=1000. clock_nanosleep and timerfd wake-ups do not depend on it";
  constexpr const char* kFix = "rebuild the kernel with CONFIG_HZ_1000=y";
  const auto& config = c.info.kernel_config;
  if (!config) return Info(kNoConfig, kWhy);
  std::optional<int64_t> hz;
  if (auto text = config->config.Get("HZ")) {
    if (auto value = ParseInt(*text, "CONFIG_HZ")) hz = *value;
  }
  if (!hz) return Info(fmt::format("CONFIG_HZ not found in {}", config->source), kWhy);
  std::string found = fmt::format("CONFIG_HZ={} in {}", *hz, config->source);
  if (config->config.IsOn("HZ_PERIODIC")) found += "; CONFIG_HZ_PERIODIC=y (the tick never stops)";
  if (*hz >= 1000) return Pass(found, kWhy);
  if (*hz >= 250) return Info(found, kWhy, kFix);
  return Warn(found, kWhy, kFix);
}

CheckResult HighResTimers(const CheckContext& c) {
  constexpr const char* kWhy =
      "without high-resolution timers every clock_nanosleep, timerfd and POSIX timer expires on "
      "the next tick, adding up to 1/HZ of latency to each wake-up";
  if (auto highres = c.cmdline.Get("highres"); highres == "off") {
    return Fail("highres=off on the kernel command line", kWhy,
                "remove highres=off from the kernel command line and reboot");
  }
  const auto& config = c.info.kernel_config;
  if (config) {
    const std::string found =
        fmt::format("CONFIG_HIGH_RES_TIMERS={} in {}",
                    config->config.Get("HIGH_RES_TIMERS").value_or("n"), config->source);
    if (config->config.IsOn("HIGH_RES_TIMERS")) return Pass(found, kWhy);
    return Fail(found, kWhy, "rebuild the kernel with CONFIG_HIGH_RES_TIMERS=y");
  }
  std::string found;
  if (auto active = TimerListHres(c.root, found)) {
    if (*active) return Pass(found, kWhy);
    return Fail(found, kWhy,
                "check 'dmesg | grep -i hres' for why the kernel did not switch to "
                "high-resolution mode (clock event device, highres=off)");
  }
  return Info(std::string(kNoConfig) + "; /proc/timer_list unreadable (needs root)", kWhy);
}

CheckResult NoHzFullSupport(const CheckContext& c) {
  constexpr const char* kWhy =
      "with CONFIG_NO_HZ_FULL and nohz_full=, a CPU that runs a single task stops its periodic "
      "tick: one timer interrupt (and the work it triggers) fewer every 1/HZ s on the CPU of "
      "the real-time thread";
  constexpr const char* kFix = "rebuild the kernel with CONFIG_NO_HZ_FULL=y";
  const auto& config = c.info.kernel_config;
  // drivers/base/cpu.c creates this file only when the kernel is built with NO_HZ_FULL.
  const bool sysfs = c.root.Exists("/sys/devices/system/cpu/nohz_full");
  std::string found;
  bool supported = false;
  if (config) {
    supported = config->config.IsOn("NO_HZ_FULL");
    found = fmt::format("CONFIG_NO_HZ_FULL={} in {}",
                        config->config.Get("NO_HZ_FULL").value_or("n"), config->source);
  } else {
    supported = sysfs;
    found = sysfs ? "/sys/devices/system/cpu/nohz_full exists"
                  : "no /sys/devices/system/cpu/nohz_full: built without NO_HZ_FULL";
  }
  if (supported) return Pass(found, kWhy);
  if (!c.isolated.empty()) {
    return Warn(found + fmt::format("; isolated CPUs {} keep their tick", CpusText(c.isolated)),
                kWhy, kFix);
  }
  return Info(found, kWhy, kFix);
}

CheckResult Clocksource(const CheckContext& c) {
  constexpr const char* kWhy =
      "every clock_gettime() and timer expiry reads the clocksource: the TSC or the arm64 "
      "architected counter costs tens of nanoseconds, HPET and the ACPI PM timer about a "
      "microsecond per read, and 'jiffies' has tick resolution";
  constexpr std::string_view kBase = "/sys/devices/system/clocksource/clocksource0/";
  const auto current = c.root.ReadLine(std::string(kBase) + "current_clocksource");
  if (!current || current->empty()) return Info("unknown: current_clocksource unreadable", kWhy);
  const std::string available =
      c.root.ReadLine(std::string(kBase) + "available_clocksource").value_or("");
  std::string found = *current;
  if (!available.empty()) found += fmt::format(" (available: {})", available);
  constexpr std::string_view kFast[] = {"tsc",       "arch_sys_counter",
                                        "kvm-clock", "hyperv_clocksource_tsc_page",
                                        "xen",       "riscv_clocksource"};
  if (std::find(std::begin(kFast), std::end(kFast), *current) != std::end(kFast)) {
    return Pass(found, kWhy);
  }
  if (*current == "jiffies") {
    return Fail(found, kWhy,
                "check 'dmesg | grep -i clocksource' for why no hardware clock was usable");
  }
  if (*current == "hpet" || *current == "acpi_pm") {
    const bool tsc = (" " + available + " ").find(" tsc ") != std::string::npos;
    return Warn(found, kWhy,
                tsc ? "echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource"
                      " (persist: " +
                          c.BootParamFix("clocksource=tsc") + ")"
                    : "the kernel rejected the TSC: check 'dmesg | grep -i tsc' (an unstable "
                      "TSC, or a VM without invariant TSC)");
  }
  return Info(found + " (not one rtpulse knows)", kWhy);
}

}  // namespace rtpulse::sys::checks
