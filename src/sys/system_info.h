#pragma once

#include <string>
#include <vector>

#include "core/fs_root.h"

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

  bool preempt_rt = false;       ///< "PREEMPT_RT" in the kernel version string.
  std::string preemption_model;  ///< PREEMPT_RT, PREEMPT_DYNAMIC, PREEMPT, or none.
  bool realtime_sysfs = false;   ///< /sys/kernel/realtime (out-of-tree RT patch only).
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

/// Online CPUs from /sys/devices/system/cpu/online, falling back to sysconf().
std::vector<int> OnlineCpus(const FsRoot& root);

}  // namespace rtpulse::sys
