#pragma once

// cyclictest --smi: System Management Interrupts on each measured CPU, from Intel's SMI
// counter (MSR_SMI_COUNT, 0x34) read through the msr driver's /dev/cpu/N/msr. An SMI stops
// the CPU in firmware, invisible to the kernel and its tracers: this counter is the only way
// to tell one from a kernel cause. docs/latency.md, "SMIs".

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/fs_root.h"

namespace rtpulse::measure {

/// MSR_SMI_COUNT's address; its low 32 bits count SMIs since reset.
inline constexpr uint32_t kSmiCountMsr = 0x34;

class SmiCounters {
 public:
  /// Checks the CPU (/proc/cpuinfo: a GenuineIntel family 6 CPU with MSRs, as cyclictest
  /// does) and reads each CPU's counter once through /dev/cpu/N/msr under `root`. One
  /// resource error says what is missing: another CPU ("not on this CPU"), the msr module,
  /// the privilege, or a counter the CPU or hypervisor does not give.
  static Expected<SmiCounters> Open(const FsRoot& root, const std::vector<int>& cpus);

  SmiCounters(SmiCounters&& other) noexcept;
  SmiCounters& operator=(SmiCounters&&) = delete;
  SmiCounters(const SmiCounters&) = delete;
  SmiCounters& operator=(const SmiCounters&) = delete;
  ~SmiCounters();

  /// The counter of `cpu` now (its 32 bits); nullopt when it cannot be read.
  std::optional<uint32_t> Read(int cpu) const;

  /// SMIs between two reads, across the 32-bit counter's wrap.
  static uint64_t Since(uint32_t before, uint32_t after) {
    return static_cast<uint32_t>(after - before);
  }

 private:
  SmiCounters() = default;
  std::map<int, int> fds_;  ///< CPU -> its open /dev/cpu/N/msr.
};

}  // namespace rtpulse::measure
