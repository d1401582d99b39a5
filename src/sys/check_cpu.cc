// CPU checks: frequency governor and limits, idle states, SMT.

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/parse.h"
#include "sys/check_internal.h"

namespace rtpulse::sys::checks {
namespace {

constexpr const char* kCpuDir = "/sys/devices/system/cpu";
/// Idle states that take longer than this to leave count as deep (x86 C1 is 1-2 us, C1E about
/// 10 us, C6 around 100 us; an arm64 WFI about 1 us).
constexpr int64_t kIdleExitLatencyLimitUs = 10;

/// One cpufreq policy: a folder and the CPUs it drives.
struct Policy {
  std::string path;
  std::vector<int> cpus;
  std::string governor;
};

std::vector<int> SpaceSeparatedCpus(std::string text) {
  std::replace(text.begin(), text.end(), ' ', ',');
  while (!text.empty() && text.back() == ',') text.pop_back();
  auto cpus = ParseCpuList(text);
  return cpus ? *cpus : std::vector<int>{};
}

/// cpufreq policies (/sys/devices/system/cpu/cpufreq/policyN); on kernels without them, one
/// pseudo-policy per CPU folder.
std::vector<Policy> ReadPolicies(const CheckContext& c) {
  std::vector<Policy> policies;
  const std::string base = std::string(kCpuDir) + "/cpufreq";
  for (const auto& name : c.root.List(base)) {
    if (name.rfind("policy", 0) != 0) continue;
    Policy p{base + "/" + name, {}, ""};
    p.governor = c.root.ReadLine(p.path + "/scaling_governor").value_or("");
    p.cpus = SpaceSeparatedCpus(c.root.ReadLine(p.path + "/affected_cpus").value_or(""));
    if (!p.governor.empty()) policies.push_back(std::move(p));
  }
  if (!policies.empty()) return policies;
  for (int cpu : c.online) {
    Policy p{fmt::format("{}/cpu{}/cpufreq", kCpuDir, cpu), {cpu}, ""};
    p.governor = c.root.ReadLine(p.path + "/scaling_governor").value_or("");
    if (!p.governor.empty()) policies.push_back(std::move(p));
  }
  return policies;
}

/// kHz as MHz without the unit ("1500", "1500.5").
std::string MhzNumber(int64_t khz) {
  if (khz % 1000 == 0) return fmt::format("{}", khz / 1000);
  return fmt::format("{:.1f}", static_cast<double>(khz) / 1000.0);
}

std::string Mhz(int64_t khz) {
  return MhzNumber(khz) + " MHz";
}

std::string MhzRange(int64_t low_khz, int64_t high_khz) {
  return fmt::format("{}-{} MHz", MhzNumber(low_khz), MhzNumber(high_khz));
}

constexpr const char* kNoCpufreq =
    "no cpufreq: the CPUs run at a clock the kernel does not control (fixed, firmware or "
    "hypervisor)";

}  // namespace

CheckResult Governor(const CheckContext& c) {
  constexpr const char* kWhy =
      "governors other than 'performance' lower the clock when the CPU idles and raise it under "
      "load: the first wake-ups after idle run slower, and each change takes time";
  const auto policies = ReadPolicies(c);
  if (policies.empty()) return Info(kNoCpufreq, kWhy);
  std::map<std::string, std::vector<int>> by_governor;
  for (const auto& p : policies) {
    by_governor[p.governor] = CpusUnion(by_governor[p.governor], p.cpus);
  }
  std::vector<std::string> parts;
  for (const auto& [governor, cpus] : by_governor) {
    parts.push_back(fmt::format("{} on CPUs {}", governor, CpusText(cpus)));
  }
  const std::string found = Join(parts, "; ");
  if (by_governor.size() == 1 && by_governor.begin()->first == "performance") {
    return Pass(found, kWhy);
  }
  return Warn(found, kWhy,
              "echo performance | tee /sys/devices/system/cpu/cpufreq/policy*/scaling_governor "
              "(or: cpupower frequency-set -g performance); persist: " +
                  c.BootParamFix("cpufreq.default_governor=performance"));
}

CheckResult FrequencyLimits(const CheckContext& c) {
  constexpr const char* kWhy =
      "a scaling_max_freq below the hardware maximum (set by hand, a power-saving tool or "
      "thermal software) slows every code path; results then describe a slower machine";
  const auto policies = ReadPolicies(c);
  if (policies.empty()) return Info(kNoCpufreq, kWhy);
  std::vector<std::string> parts;
  std::vector<std::string> fixes;
  for (const auto& p : policies) {
    const auto hw_min = ReadInt(c.root, p.path + "/cpuinfo_min_freq");
    const auto hw_max = ReadInt(c.root, p.path + "/cpuinfo_max_freq");
    const auto min = ReadInt(c.root, p.path + "/scaling_min_freq");
    const auto max = ReadInt(c.root, p.path + "/scaling_max_freq");
    const auto cur = ReadInt(c.root, p.path + "/scaling_cur_freq");
    if (!hw_max || !max || !min) continue;
    std::string part = fmt::format("CPUs {}: {} allowed", CpusText(p.cpus), MhzRange(*min, *max));
    if (hw_min) part += fmt::format(" (hardware {})", MhzRange(*hw_min, *hw_max));
    if (cur) part += fmt::format(", now {}", Mhz(*cur));
    if (*max < *hw_max) {
      part += fmt::format(", capped below {}", Mhz(*hw_max));
      fixes.push_back(fmt::format("echo {} > {}/scaling_max_freq", *hw_max, p.path));
    }
    parts.push_back(std::move(part));
  }
  if (parts.empty()) return Info("cpufreq limits unreadable", kWhy);
  const std::string found = Join(parts, "; ");
  if (fixes.empty()) return Pass(found, kWhy);
  std::string fix = Join(fixes, "; ");
  if (c.raspberry_pi) fix += " (and check arm_freq in config.txt)";
  return Warn(found, kWhy, std::move(fix));
}

CheckResult IdleStates(const CheckContext& c) {
  const std::string why = fmt::format(
      "leaving a deep idle state takes its exit latency (tens to hundreds of microseconds) "
      "before the woken thread runs; states that take more than {} us count as deep here",
      kIdleExitLatencyLimitUs);
  const std::string driver =
      c.root.ReadLine(std::string(kCpuDir) + "/cpuidle/current_driver").value_or("none");
  // "NAME (N us)" -> CPUs, for deep enabled states and for all enabled states.
  std::map<std::string, std::vector<int>> deep;
  std::map<std::string, std::vector<int>> deep_disabled;
  int64_t deepest_latency = -1;
  std::string deepest;
  for (int cpu : c.online) {
    const std::string dir = fmt::format("{}/cpu{}/cpuidle", kCpuDir, cpu);
    for (const auto& state : c.root.List(dir)) {
      if (state.rfind("state", 0) != 0) continue;
      const std::string path = dir + "/" + state;
      const std::string name = c.root.ReadLine(path + "/name").value_or(state);
      const auto latency = ReadInt(c.root, path + "/latency");
      if (!latency) continue;
      const bool disabled = ReadInt(c.root, path + "/disable").value_or(0) != 0;
      const std::string label = fmt::format("{} ({} us)", name, *latency);
      if (*latency > kIdleExitLatencyLimitUs) {
        auto& set = disabled ? deep_disabled[label] : deep[label];
        set = CpusUnion(set, {cpu});
      }
      if (!disabled && *latency > deepest_latency) {
        deepest_latency = *latency;
        deepest = label;
      }
    }
  }
  if (deepest_latency < 0 && deep_disabled.empty()) {
    return Pass(fmt::format("no idle states (cpuidle driver: {}): idle CPUs wait in the "
                            "architecture's default instruction (WFI, HLT)",
                            driver),
                why);
  }
  const auto describe = [](const std::map<std::string, std::vector<int>>& states) {
    std::vector<std::string> parts;
    for (const auto& [label, cpus] : states) {
      parts.push_back(fmt::format("{} on CPUs {}", label, CpusText(cpus)));
    }
    return Join(parts, ", ");
  };
  if (!deep.empty()) {
    return Warn(fmt::format("driver {}; enabled deep states: {}", driver, describe(deep)), why,
                fmt::format("cpupower idle-set -D {} (disables every state with a longer exit "
                            "latency; or echo 1 > /sys/devices/system/cpu/cpu*/cpuidle/stateN/"
                            "disable). rtpulse latency holds /dev/cpu_dma_latency at 0 during "
                            "its own runs; a real-time application must do the same",
                            kIdleExitLatencyLimitUs));
  }
  std::string found = fmt::format("driver {}; deepest enabled state: {}", driver,
                                  deepest.empty() ? "none" : deepest);
  if (!deep_disabled.empty()) found += "; disabled: " + describe(deep_disabled);
  return Pass(found, why);
}

CheckResult Smt(const CheckContext& c) {
  constexpr const char* kWhy =
      "two hardware threads of one core share its execution units and caches: whatever runs on "
      "the sibling slows the real-time thread by a varying amount";
  const std::string base = std::string(kCpuDir) + "/smt/";
  const auto active = c.root.ReadLine(base + "active");
  const std::string control = c.root.ReadLine(base + "control").value_or("unknown");
  const std::string fix =
      "echo off > /sys/devices/system/cpu/smt/control (persist: " + c.BootParamFix("nosmt") + ")";
  if (active == "1") return Warn(fmt::format("SMT on (smt/control: {})", control), kWhy, fix);
  if (active == "0") {
    if (control == "notsupported" || control == "notimplemented") {
      return Pass(fmt::format("no SMT on this CPU (smt/control: {})", control), kWhy);
    }
    return Pass(fmt::format("SMT off (smt/control: {})", control), kWhy);
  }
  // Kernels without the smt/ folder (older arm64): the topology still tells.
  const auto siblings =
      ReadCpuListFile(c.root, std::string(kCpuDir) + "/cpu0/topology/thread_siblings_list");
  if (siblings.empty()) return Info("unknown: no smt/active and no thread_siblings_list", kWhy);
  const std::string found =
      fmt::format("no smt/ folder; cpu0 thread_siblings_list: {}", CpusText(siblings));
  if (siblings.size() > 1) return Warn(found, kWhy, c.BootParamFix("nosmt"));
  return Pass(found + " (one thread per core)", kWhy);
}

}  // namespace rtpulse::sys::checks
