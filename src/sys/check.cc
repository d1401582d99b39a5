#include "sys/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/parse.h"
#include "sys/check_internal.h"

namespace rtpulse::sys {
namespace {

using namespace checks;  // NOLINT(google-build-using-namespace): the table below reads better

constexpr std::array kChecks = {
    CheckDescriptor{"kernel.preemption", "kernel", "Preemption model", &Preemption, false},
    CheckDescriptor{"kernel.config", "kernel", "Kernel configuration", &KernelConfigFile, false},
    CheckDescriptor{"kernel.hz", "kernel", "Timer tick (HZ)", &TickRate, false},
    CheckDescriptor{"kernel.hrtimers", "kernel", "High-resolution timers", &HighResTimers, false},
    CheckDescriptor{"kernel.nohz_full", "kernel", "Tickless support (NO_HZ_FULL)", &NoHzFullSupport,
                    false},
    CheckDescriptor{"kernel.clocksource", "kernel", "Clocksource", &Clocksource, false},
    CheckDescriptor{"isolation.isolcpus", "isolation", "Isolated CPUs (isolcpus)", &Isolcpus,
                    false},
    CheckDescriptor{"isolation.nohz_full", "isolation", "Tickless CPUs (nohz_full)", &NohzFull,
                    false},
    CheckDescriptor{"isolation.rcu_nocbs", "isolation", "RCU callback offload (rcu_nocbs)",
                    &RcuNocbs, false},
    CheckDescriptor{"isolation.irqaffinity", "isolation", "Default IRQ affinity (irqaffinity)",
                    &IrqAffinityDefault, false},
    CheckDescriptor{"isolation.kthread_cpus", "isolation", "Kernel threads (kthread_cpus)",
                    &KthreadCpus, false},
    CheckDescriptor{"isolation.irqs", "isolation", "Device IRQs on isolated CPUs", &DeviceIrqs,
                    false},
    CheckDescriptor{"cpu.governor", "cpu", "Frequency governor", &Governor, false},
    CheckDescriptor{"cpu.frequency", "cpu", "Frequency limits", &FrequencyLimits, false},
    CheckDescriptor{"cpu.idle", "cpu", "Idle states", &IdleStates, false},
    CheckDescriptor{"cpu.smt", "cpu", "Simultaneous multithreading (SMT)", &Smt, false},
    CheckDescriptor{"memory.rt_throttling", "memory", "RT throttling", &RtThrottling, false},
    CheckDescriptor{"memory.thp", "memory", "Transparent huge pages", &TransparentHugePages, false},
    CheckDescriptor{"memory.swap", "memory", "Swap", &Swap, false},
    CheckDescriptor{"platform.virtualization", "platform", "Virtualisation", &Virtualization,
                    false},
    CheckDescriptor{"platform.steal", "platform", "Steal time", &StealTime, false},
    CheckDescriptor{"platform.board", "platform", "Board", &Board, false},
    CheckDescriptor{"platform.throttling", "platform", "Firmware throttling (vcgencmd)",
                    &FirmwareThrottling, false},
    CheckDescriptor{"tools.stress_ng", "tools", "stress-ng", &StressNg, false},
    CheckDescriptor{"tools.cyclictest", "tools", "cyclictest", &Cyclictest, false},
    CheckDescriptor{"process.privileges", "process", "Real-time scheduling privilege",
                    &RtPrivileges, true},
    CheckDescriptor{"process.memlock", "process", "Locked-memory limit", &MemlockLimit, true},
};

int LastPossibleCpu(const FsRoot& root, const std::vector<int>& online) {
  const auto possible = ReadCpuListFile(root, "/sys/devices/system/cpu/possible");
  if (!possible.empty()) return possible.back();
  return online.empty() ? 0 : online.back();
}

}  // namespace

std::string_view StatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPass:
      return "pass";
    case CheckStatus::kWarn:
      return "warn";
    case CheckStatus::kFail:
      return "fail";
    case CheckStatus::kInfo:
      return "info";
  }
  return "info";
}

std::string_view AreaTitle(std::string_view area) {
  if (area == "kernel") return "Kernel";
  if (area == "isolation") return "CPU isolation";
  if (area == "cpu") return "CPU";
  if (area == "memory") return "Scheduler and memory";
  if (area == "platform") return "Platform";
  if (area == "tools") return "Tools";
  if (area == "process") return "This process";
  return area;
}

CheckContext::CheckContext(const FsRoot& root_in, const CommandRunner& commands_in,
                           ProcessFacts process_in)
    : root(root_in), commands(commands_in), process(process_in), info(ProbeSystem(root_in)) {
  if (auto line = root.ReadLine("/proc/cmdline")) {
    have_cmdline = true;
    cmdline = BootParams::Parse(*line);
  }
  online = info.online_cpus;
  last_cpu = LastPossibleCpu(root, online);
  isolated = ReadCpuListFile(root, "/sys/devices/system/cpu/isolated");
  raspberry_pi = info.board.rfind("Raspberry Pi", 0) == 0;
}

std::vector<int> CheckContext::RequestedNohzFull() const {
  std::vector<int> cpus;
  if (auto value = cmdline.Get("nohz_full")) {
    if (auto parsed = ParseKernelCpuList(*value, last_cpu)) cpus = *parsed;
  }
  if (auto value = cmdline.Get("isolcpus")) {
    auto parsed = ParseIsolcpus(*value, last_cpu);
    if (parsed &&
        std::find(parsed->flags.begin(), parsed->flags.end(), "nohz") != parsed->flags.end()) {
      cpus = CpusUnion(cpus, parsed->cpus);
    }
  }
  return cpus;
}

std::string CheckContext::BootParamFix(std::string_view params) const {
  if (raspberry_pi) {
    // Raspberry Pi OS bookworm mounts the boot partition at /boot/firmware; older images at /boot.
    std::string file = "/boot/firmware/cmdline.txt";
    if (!root.Exists(file) && root.Exists("/boot/cmdline.txt")) file = "/boot/cmdline.txt";
    return fmt::format("add '{}' to the single line of {} (replacing any earlier value) and reboot",
                       params, file);
  }
  if (root.Exists("/etc/default/grub")) {
    return fmt::format(
        "add '{}' to GRUB_CMDLINE_LINUX in /etc/default/grub, run update-grub and reboot", params);
  }
  return fmt::format("add '{}' to the kernel command line of your boot loader and reboot", params);
}

std::span<const CheckDescriptor> AllChecks() {
  return kChecks;
}

std::vector<CheckResult> RunChecks(const CheckContext& context) {
  std::vector<CheckResult> results;
  for (const auto& check : kChecks) {
    CheckResult result = check.run(context);
    result.id = check.id;
    result.area = check.area;
    result.title = check.title;
    result.process_scope = check.process_scope;
    results.push_back(std::move(result));
  }
  return results;
}

namespace checks {

CheckResult Pass(std::string found, std::string why) {
  return {{}, {}, {}, CheckStatus::kPass, std::move(found), std::move(why), {}, false};
}

CheckResult Info(std::string found, std::string why, std::string fix) {
  return {{}, {}, {}, CheckStatus::kInfo, std::move(found), std::move(why), std::move(fix), false};
}

CheckResult Warn(std::string found, std::string why, std::string fix) {
  return {{}, {}, {}, CheckStatus::kWarn, std::move(found), std::move(why), std::move(fix), false};
}

CheckResult Fail(std::string found, std::string why, std::string fix) {
  return {{}, {}, {}, CheckStatus::kFail, std::move(found), std::move(why), std::move(fix), false};
}

std::string CpusText(const std::vector<int>& cpus) {
  return cpus.empty() ? "none" : FormatCpuList(cpus);
}

std::optional<int64_t> ReadInt(const FsRoot& root, const std::string& path) {
  auto line = root.ReadLine(path);
  if (!line) return std::nullopt;
  auto value = ParseSignedInt(*line, path);  // sched_rt_runtime_us = -1 is legitimate
  if (!value) return std::nullopt;
  return *value;
}

std::vector<int> ReadCpuListFile(const FsRoot& root, const std::string& path) {
  auto line = root.ReadLine(path);
  if (!line || line->empty() || *line == "(null)") return {};
  auto cpus = ParseCpuList(*line);
  return cpus ? *cpus : std::vector<int>{};
}

std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

}  // namespace checks
}  // namespace rtpulse::sys
