#include "sys/system_info.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "core/parse.h"

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
    if (cpuinfo->find(" hypervisor") != std::string::npos) return "hypervisor (cpuinfo flag)";
  }
  return "";
}

std::string PreemptionModel(const std::string& version) {
  for (const char* model : {"PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT"}) {
    if (version.find(model) != std::string::npos) return model;
  }
  return "none";
}

}  // namespace

std::vector<int> OnlineCpus(const FsRoot& root) {
  if (auto line = root.ReadLine("/sys/devices/system/cpu/online")) {
    if (auto cpus = ParseCpuList(*line)) return *cpus;
  }
  std::vector<int> cpus;
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 0; i < n; ++i) cpus.push_back(i);
  return cpus;
}

SystemInfo ProbeSystem(const FsRoot& root) {
  SystemInfo info;
  utsname uts{};
  uname(&uts);
  info.sysname = ReadOr(root, "/proc/sys/kernel/ostype", uts.sysname);
  info.nodename = ReadOr(root, "/proc/sys/kernel/hostname", uts.nodename);
  info.release = ReadOr(root, "/proc/sys/kernel/osrelease", uts.release);
  info.version = ReadOr(root, "/proc/sys/kernel/version", uts.version);
  info.machine = uts.machine;
  info.preemption_model = PreemptionModel(info.version);
  info.preempt_rt = info.preemption_model == "PREEMPT_RT";
  info.realtime_sysfs = root.Exists("/sys/kernel/realtime");
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
        "kernel is not PREEMPT_RT (preemption model: {}): worst-case latencies will be higher "
        "than on an RT kernel",
        info.preemption_model));
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
