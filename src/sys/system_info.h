#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/fs_root.h"
#include "core/kernel_config.h"

namespace rtpulse::sys {

/// What a latency result needs to say about the machine it ran on. The `check` command
/// (pre-flight audit) builds on the same probe.
struct SystemInfo {
  // uname(2) fields, cyclictest's "sysinfo" block.
  std::string sysname;
  std::string nodename;
  std::string release;
  std::string version;
  std::string machine;

  bool preempt_rt = false;  ///< PREEMPT_RT by uname -v, the kernel config or /sys/kernel/realtime.
  /// PREEMPT_RT, PREEMPT_DYNAMIC, PREEMPT, PREEMPT_VOLUNTARY (config only) or none.
  std::string preemption_model;
  /// For PREEMPT_DYNAMIC: the mode it runs in (none, voluntary, full, lazy), "" if unknown.
  std::string preempt_dynamic_mode;
  /// Where each conclusion about preemption came from, e.g. "uname -v: #1 SMP PREEMPT_RT ...",
  /// "CONFIG_PREEMPT_RT=y in /proc/config.gz", "/sys/kernel/realtime = 1".
  std::vector<std::string> preemption_evidence;
  bool realtime_sysfs = false;  ///< /sys/kernel/realtime (out-of-tree RT patch only).
  /// The running kernel's configuration, when /proc/config.gz or /boot/config-<release> exists.
  std::optional<RunningKernelConfig> kernel_config;
  std::string kernel_config_problem;  ///< Why kernel_config is absent.
  std::vector<int> online_cpus;
  std::vector<std::string> governors;  ///< Distinct scaling governors across CPUs.
  std::string clocksource;
  std::string hypervisor;  ///< "" on bare metal; e.g. "KVM", "QEMU", "hypervisor".
  std::string board;       ///< /proc/device-tree/model, "" when absent.
};

/// Probes the machine through `root` (fixture trees in tests). Never fails: a missing
/// source leaves its field empty.
SystemInfo ProbeSystem(const FsRoot& root);

/// Environment warnings a measurement must carry with its result (VM, no PREEMPT_RT,
/// governor not 'performance').
std::vector<std::string> EnvironmentWarnings(const SystemInfo& info);

}  // namespace rtpulse::sys
