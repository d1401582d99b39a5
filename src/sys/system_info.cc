#include "sys/system_info.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <utility>

#include "core/cpus.h"
#include "core/parse.h"
#include "sys/boot_params.h"

namespace rtpulse::sys {
namespace {

std::string ReadOr(const FsRoot& root, const char* path, const char* fallback) {
  auto line = root.ReadLine(path);
  return line ? *line : std::string(fallback);
}

std::string DetectHypervisor(const FsRoot& root) {
  if (auto type = root.ReadLine("/sys/hypervisor/type"); type && !type->empty()) return *type;
  if (auto vendor = root.ReadLine("/sys/class/dmi/id/sys_vendor")) {
    for (const char* known : {"QEMU", "KVM", "VMware", "Xen", "innotek", "Microsoft", "Amazon",
                              "Google", "Firecracker"}) {
      if (vendor->find(known) != std::string::npos) return *vendor;
    }
  }
  if (auto cpuinfo = root.Read("/proc/cpuinfo")) {
    if (cpuinfo->find(" hypervisor") != std::string::npos) {
      // The paravirtual clocksources name the hypervisor when DMI does not (e.g. Firecracker).
      const std::string clocks =
          " " +
          ReadOr(root, "/sys/devices/system/clocksource/clocksource0/available_clocksource", "") +
          " ";
      if (clocks.find(" kvm-clock ") != std::string::npos) return "KVM (cpuinfo flag, kvm-clock)";
      if (clocks.find(" hyperv_clocksource") != std::string::npos) {
        return "Hyper-V (cpuinfo flag, hyperv clocksource)";
      }
      if (clocks.find(" xen ") != std::string::npos) return "Xen (cpuinfo flag, xen clocksource)";
      return "hypervisor (cpuinfo flag)";
    }
  }
  return "";
}

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find(' ', pos), text.size());
    if (end > pos) words.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return words;
}

/// What `uname -v` says. mkcompile_h writes "PREEMPT_RT", "PREEMPT_DYNAMIC" or "PREEMPT"
/// (RT-patched 4.x kernels wrote "PREEMPT RT").
struct UnameFlags {
  bool rt = false;
  bool dynamic = false;
  bool preempt = false;
};

UnameFlags ParseUnameVersion(const std::string& version) {
  UnameFlags flags;
  const auto words = Words(version);
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "PREEMPT_RT") flags.rt = true;
    if (words[i] == "PREEMPT_DYNAMIC") flags.dynamic = true;
    if (words[i] == "PREEMPT") {
      flags.preempt = true;
      if (i + 1 < words.size() && words[i + 1] == "RT") flags.rt = true;
    }
  }
  return flags;
}

constexpr const char* kPreemptOptions[] = {"PREEMPT_RT",   "PREEMPT_DYNAMIC",   "PREEMPT",
                                           "PREEMPT_LAZY", "PREEMPT_VOLUNTARY", "PREEMPT_NONE"};

void AddConfigEvidence(const RunningKernelConfig& running, bool uname_rt,
                       std::vector<std::string>& evidence) {
  bool any = false;
  for (const char* option : kPreemptOptions) {
    if (running.config.IsOn(option)) {
      evidence.push_back(fmt::format("CONFIG_{}=y in {}", option, running.source));
      any = true;
    }
  }
  if (!any) evidence.push_back(fmt::format("no CONFIG_PREEMPT* option in {}", running.source));
  if (uname_rt != running.config.IsOn("PREEMPT_RT")) {
    const bool boot_file = running.source != "/proc/config.gz";
    evidence.push_back(fmt::format("uname -v and {} disagree about PREEMPT_RT{}", running.source,
                                   boot_file ? " (that file may belong to another build)" : ""));
  }
}

/// The mode a PREEMPT_DYNAMIC kernel runs in: debugfs knows for sure; else the preempt= boot
/// parameter; else the config's boot default.
std::string DynamicMode(const FsRoot& root, const std::optional<RunningKernelConfig>& config,
                        std::vector<std::string>& evidence) {
  // "none voluntary (full) lazy": the current mode is in parentheses.
  if (auto modes = root.ReadLine("/sys/kernel/debug/sched/preempt")) {
    const size_t open = modes->find('(');
    const size_t close = modes->find(')', open);
    if (open != std::string::npos && close != std::string::npos) {
      std::string mode = modes->substr(open + 1, close - open - 1);
      evidence.push_back(fmt::format("/sys/kernel/debug/sched/preempt: {}", *modes));
      return mode;
    }
  }
  if (auto cmdline = root.ReadLine("/proc/cmdline")) {
    if (auto preempt = BootParams::Parse(*cmdline).Get("preempt"); preempt && !preempt->empty()) {
      evidence.push_back(fmt::format("preempt={} on the kernel command line", *preempt));
      return *preempt;
    }
  }
  if (!config) return "";
  constexpr std::pair<const char*, const char*> kDefaults[] = {{"PREEMPT_NONE", "none"},
                                                               {"PREEMPT_VOLUNTARY", "voluntary"},
                                                               {"PREEMPT", "full"},
                                                               {"PREEMPT_LAZY", "lazy"}};
  for (const auto& [option, mode] : kDefaults) {
    if (config->config.IsOn(option)) {
      evidence.push_back(
          fmt::format("no preempt= boot parameter: the boot default CONFIG_{}=y applies", option));
      return mode;
    }
  }
  return "";
}

void DetectPreemption(const FsRoot& root, SystemInfo& info) {
  const UnameFlags uname = ParseUnameVersion(info.version);
  const auto& config = info.kernel_config;
  if (!info.version.empty()) info.preemption_evidence.push_back("uname -v: " + info.version);
  if (config) AddConfigEvidence(*config, uname.rt, info.preemption_evidence);
  const auto realtime = root.ReadLine("/sys/kernel/realtime");
  info.realtime_sysfs = realtime.has_value();
  if (realtime) info.preemption_evidence.push_back("/sys/kernel/realtime = " + *realtime);

  const auto on = [&](const char* option) { return config && config->config.IsOn(option); };
  if (uname.rt || on("PREEMPT_RT") || realtime == "1") {
    info.preemption_model = "PREEMPT_RT";
  } else if (uname.dynamic || on("PREEMPT_DYNAMIC")) {
    info.preemption_model = "PREEMPT_DYNAMIC";
    info.preempt_dynamic_mode = DynamicMode(root, config, info.preemption_evidence);
  } else if (uname.preempt || on("PREEMPT")) {
    info.preemption_model = "PREEMPT";
  } else if (on("PREEMPT_VOLUNTARY")) {
    info.preemption_model = "PREEMPT_VOLUNTARY";
  } else {
    info.preemption_model = "none";
  }
  info.preempt_rt = info.preemption_model == "PREEMPT_RT";
}

}  // namespace

SystemInfo ProbeSystem(const FsRoot& root) {
  SystemInfo info;
  utsname uts{};
  uname(&uts);
  info.sysname = ReadOr(root, "/proc/sys/kernel/ostype", uts.sysname);
  info.nodename = ReadOr(root, "/proc/sys/kernel/hostname", uts.nodename);
  info.release = ReadOr(root, "/proc/sys/kernel/osrelease", uts.release);
  info.version = ReadOr(root, "/proc/sys/kernel/version", uts.version);
  // /proc/sys/kernel/arch (Linux 6.1+) so a fixture tree can say what it is.
  info.machine = ReadOr(root, "/proc/sys/kernel/arch", uts.machine);
  // Lenient: the audit takes whatever it can learn from a config it only partly understands.
  if (auto loaded = LoadKernelConfig(root, info.release, ConfigReading::kLenient)) {
    info.kernel_config = std::move(*loaded);
  } else {
    info.kernel_config_problem = loaded.error().message;
  }
  DetectPreemption(root, info);
  info.online_cpus = OnlineCpus(root);
  std::set<std::string> governors;
  for (int cpu : info.online_cpus) {
    if (auto g = root.ReadLine(
            fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq/scaling_governor", cpu))) {
      governors.insert(*g);
    }
  }
  info.governors.assign(governors.begin(), governors.end());
  info.clocksource =
      ReadOr(root, "/sys/devices/system/clocksource/clocksource0/current_clocksource", "");
  info.hypervisor = DetectHypervisor(root);
  info.board = ReadOr(root, "/proc/device-tree/model", "");
  return info;
}

std::vector<std::string> EnvironmentWarnings(const SystemInfo& info) {
  std::vector<std::string> warnings;
  if (!info.preempt_rt) {
    warnings.push_back(fmt::format(
        "kernel is not PREEMPT_RT (preemption model: {}{}): worst-case latencies will be higher "
        "than on an RT kernel",
        info.preemption_model,
        info.preempt_dynamic_mode.empty() ? "" : ", mode " + info.preempt_dynamic_mode));
  }
  if (!info.hypervisor.empty()) {
    warnings.push_back(fmt::format(
        "running in a virtual machine ({}): the host can steal time and add multi-millisecond "
        "spikes that are not this kernel's",
        info.hypervisor));
  }
  for (const auto& g : info.governors) {
    if (g != "performance") {
      warnings.push_back(fmt::format(
          "CPU frequency governor is '{}', not 'performance': frequency changes add latency "
          "(fix: cpupower frequency-set -g performance)",
          g));
    }
  }
  return warnings;
}

}  // namespace rtpulse::sys
