#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/command_runner.h"
#include "core/fs_root.h"
#include "sys/boot_params.h"
#include "sys/process_facts.h"
#include "sys/system_info.h"

namespace rtpulse::sys {

/// pass: as a real-time machine wants it. warn: costs latency or hides it; worth fixing.
/// fail: broken or self-contradicting (a boot parameter the kernel ignores, throttling now).
/// info: not applicable here, or unknown, or a fact with no right answer (the board).
enum class CheckStatus { kPass, kWarn, kFail, kInfo };

/// "pass", "warn", "fail", "info".
std::string_view StatusName(CheckStatus status);

/// One audited item: what was found, why it matters for latency, and the exact fix.
struct CheckResult {
  std::string id;     ///< Stable, for scripts: "kernel.preemption".
  std::string area;   ///< "kernel", "isolation", "cpu", "memory", "platform", "tools", "process".
  std::string title;  ///< "Preemption model".
  CheckStatus status = CheckStatus::kInfo;
  std::string found;
  std::string why;
  std::string fix;  ///< Command or boot parameter; "" when nothing needs fixing.
  /// True when the finding describes this process (privileges, limits), not the machine's
  /// files: it does not follow RTPULSE_SYSROOT.
  bool process_scope = false;
};

/// Everything a check may look at, gathered once.
struct CheckContext {
  CheckContext(const FsRoot& root_in, const CommandRunner& commands_in, ProcessFacts process_in);

  const FsRoot& root;
  const CommandRunner& commands;
  ProcessFacts process;
  SystemInfo info;
  bool have_cmdline = false;
  BootParams cmdline;
  std::vector<int> online;
  int last_cpu = 0;           ///< Highest possible CPU (/sys/.../cpu/possible).
  std::vector<int> isolated;  ///< /sys/devices/system/cpu/isolated.
  bool raspberry_pi = false;  ///< The device-tree model says so.

  /// The CPUs nohz_full= and isolcpus=nohz ask to make tickless, from the command line.
  std::vector<int> RequestedNohzFull() const;
  /// "append 'PARAMS' to ... and reboot", for this machine's boot loader.
  std::string BootParamFix(std::string_view params) const;
};

/// One row of the check table (the stress-ng registry pattern): adding a check is one
/// function and one line.
struct CheckDescriptor {
  const char* id;
  const char* area;
  const char* title;
  CheckResult (*run)(const CheckContext& context);
  bool process_scope;
};

/// Every check, in report order.
std::span<const CheckDescriptor> AllChecks();

/// Runs every check. Never throws for a missing file: that is a finding.
std::vector<CheckResult> RunChecks(const CheckContext& context);

/// Display name of an area ("isolation" -> "CPU isolation").
std::string_view AreaTitle(std::string_view area);

}  // namespace rtpulse::sys
