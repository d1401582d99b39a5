#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace rtpulse::sys {

/// The kernel command line (/proc/cmdline) split the way the kernel splits it: on
/// whitespace, with double quotes grouping, and stopping at "--" (what follows goes to init).
class BootParams {
 public:
  static BootParams Parse(std::string_view cmdline);

  /// True when KEY was given, with or without a value. '-' and '_' are the same in keys, as
  /// in the kernel's parameq().
  bool Has(std::string_view key) const;
  /// The value of the last KEY=VALUE ("" for a bare KEY); nullopt when absent.
  std::optional<std::string> Get(std::string_view key) const;
  /// (key, value) in command-line order, keys normalised to '_'.
  const std::vector<std::pair<std::string, std::string>>& params() const { return params_; }

 private:
  std::vector<std::pair<std::string, std::string>> params_;
};

/// Parses a CPU list in the kernel's boot-parameter syntax (Documentation/admin-guide/
/// kernel-parameters.rst, "CPU lists"): "0-3,6", "all", "N" for the last CPU, and
/// "first-last:used/group" strides. `last_cpu` is the highest possible CPU number.
Expected<std::vector<int>> ParseKernelCpuList(std::string_view text, int last_cpu);

/// isolcpus=[flag,...,]cpu-list.
struct IsolcpusParam {
  std::vector<std::string> flags;          ///< nohz, domain, managed_irq, as given.
  std::vector<std::string> unknown_flags;  ///< Skipped by the kernel (5.7+).
  std::vector<int> cpus;
  /// The CPUs leave the scheduler domains (and so show in /sys/.../cpu/isolated): the
  /// "domain" flag, or no flag at all (the kernel's default).
  bool domain = true;
};

/// Parses an isolcpus= value.
Expected<IsolcpusParam> ParseIsolcpus(std::string_view value, int last_cpu);

/// CPUs in `a` that are not in `b` (both sorted).
std::vector<int> CpusMinus(const std::vector<int>& a, const std::vector<int>& b);
/// CPUs in both (both sorted).
std::vector<int> CpusIntersect(const std::vector<int>& a, const std::vector<int>& b);
/// Sorted union.
std::vector<int> CpusUnion(const std::vector<int>& a, const std::vector<int>& b);

/// Parses a hex CPU mask as in /proc/irq/default_smp_affinity ("f", "00000000,0000000f").
Expected<std::vector<int>> ParseCpuMask(std::string_view text);

}  // namespace rtpulse::sys
