#pragma once

// Shared by the check_*.cc files: result builders, small readers, and one declaration per
// check (the table is in check.cc).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/check.h"

namespace rtpulse::sys::checks {

CheckResult Pass(std::string found, std::string why);
CheckResult Info(std::string found, std::string why, std::string fix = "");
CheckResult Warn(std::string found, std::string why, std::string fix);
CheckResult Fail(std::string found, std::string why, std::string fix);

/// "0-3,6", or "none" for an empty set.
std::string CpusText(const std::vector<int>& cpus);
/// A whole number from the first line of a file; nullopt when absent or not a number.
std::optional<int64_t> ReadInt(const FsRoot& root, const std::string& path);
/// A CPU list file (/sys/.../isolated); empty when absent, empty or "(null)".
std::vector<int> ReadCpuListFile(const FsRoot& root, const std::string& path);
/// Items joined with `separator`.
std::string Join(const std::vector<std::string>& items, std::string_view separator);

// kernel (check_kernel.cc)
CheckResult Preemption(const CheckContext& c);
CheckResult KernelConfigFile(const CheckContext& c);
CheckResult TickRate(const CheckContext& c);
CheckResult HighResTimers(const CheckContext& c);
CheckResult NoHzFullSupport(const CheckContext& c);
CheckResult Clocksource(const CheckContext& c);

// isolation (check_isolation.cc)
CheckResult Isolcpus(const CheckContext& c);
CheckResult NohzFull(const CheckContext& c);
CheckResult RcuNocbs(const CheckContext& c);
CheckResult IrqAffinityDefault(const CheckContext& c);
CheckResult KthreadCpus(const CheckContext& c);
CheckResult DeviceIrqs(const CheckContext& c);

// cpu (check_cpu.cc)
CheckResult Governor(const CheckContext& c);
CheckResult FrequencyLimits(const CheckContext& c);
CheckResult IdleStates(const CheckContext& c);
CheckResult Smt(const CheckContext& c);

// memory and scheduler (check_memory.cc)
CheckResult RtThrottling(const CheckContext& c);
CheckResult TransparentHugePages(const CheckContext& c);
CheckResult Swap(const CheckContext& c);

// platform (check_platform.cc)
CheckResult Virtualization(const CheckContext& c);
CheckResult StealTime(const CheckContext& c);
CheckResult Board(const CheckContext& c);
CheckResult FirmwareThrottling(const CheckContext& c);
CheckResult StressNg(const CheckContext& c);
CheckResult Cyclictest(const CheckContext& c);

// this process (check_process.cc)
CheckResult RtPrivileges(const CheckContext& c);
CheckResult MemlockLimit(const CheckContext& c);

}  // namespace rtpulse::sys::checks
