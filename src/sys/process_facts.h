#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"

namespace rtpulse::sys {

/// What this process may do, as the kernel sees it. These come from the running process,
/// never from a fixture tree: RTPULSE_SYSROOT redirects files, not credentials.
struct ProcessFacts {
  static constexpr int kCapIpcLock = 14;  ///< linux/capability.h
  static constexpr int kCapSysNice = 23;

  uint32_t euid = 0;
  uint64_t cap_effective = 0;                  ///< Effective capability set, bit N = capability N.
  std::optional<uint64_t> memlock_soft_bytes;  ///< RLIMIT_MEMLOCK; nullopt = unlimited.
  std::optional<uint64_t> memlock_hard_bytes;
  std::optional<uint64_t> rtprio_soft;  ///< RLIMIT_RTPRIO; nullopt = unlimited.
  std::optional<uint64_t> rtprio_hard;
  /// True when the values were given by RTPULSE_CHECK_PROCESS instead of read from the
  /// process (golden tests; reproducing a report).
  bool injected = false;

  bool HasCap(int cap) const { return ((cap_effective >> cap) & 1u) != 0; }
};

/// Reads geteuid(), capget() and getrlimit() of this process.
ProcessFacts ProbeProcess();

/// Parses the injection format of RTPULSE_CHECK_PROCESS, comma-separated key=value:
///   euid=1000,cap_eff=0x0,memlock=8388608:8388608,rtprio=0:0
/// memlock is soft:hard in bytes and rtprio soft:hard; either side may be "unlimited".
/// Every key is required, so a test states the whole identity it pretends to have.
Expected<ProcessFacts> ParseProcessFacts(std::string_view spec);

/// The environment variable ParseProcessFacts reads in `rtpulse check`.
inline constexpr const char* kProcessFactsEnv = "RTPULSE_CHECK_PROCESS";

}  // namespace rtpulse::sys
