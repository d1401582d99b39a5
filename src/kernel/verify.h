#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/kernel_config.h"

namespace rtpulse::kernel {

/// What became of one requested option in a final .config.
enum class OptionState {
  kSet,      ///< The config has the requested value (for "off": absent or not set).
  kDropped,  ///< The config has the option with another value: Kconfig or the base overrode it.
  kMissing,  ///< The option is not in the config at all: unmet dependencies or unknown.
};

/// "set", "dropped" or "missing".
std::string_view StateName(OptionState state);

/// The verdict on one fragment line.
struct OptionCheck {
  std::string name;                   ///< Without CONFIG_ prefix.
  std::string wanted;                 ///< "y", "m", "n" or a value.
  std::optional<std::string> actual;  ///< nullopt when absent from the config.
  OptionState state = OptionState::kSet;
  /// Why it is not set, naming the dependency and the fix; known Kconfig traps (EXPERT,
  /// NTP_PPS vs NO_HZ_COMMON, no ARCH_SUPPORTS_RT before 6.12) get a specific explanation.
  std::string reason;
};

/// Every fragment option checked against one config.
struct VerifyReport {
  std::vector<OptionCheck> checks;
  /// Extra failures that are not one option (e.g. uname -v contradicts the config).
  std::vector<std::string> problems;

  size_t Count(OptionState state) const;
  /// True when every requested option is set and there is no other problem.
  bool ok() const;
};

/// Checks each option of `fragment` against `config`. "m" is satisfied by "y" (built in is
/// at least as available as a module); "n" is satisfied by absence.
VerifyReport Verify(const KernelConfig& fragment, const KernelConfig& config);

/// Adds a problem when the fragment asks for PREEMPT_RT and the config says it is on, but
/// the running kernel's version string (`uname -v`) does not say PREEMPT_RT: the config
/// then belongs to another kernel than the one running.
void CheckRunningVersion(const KernelConfig& fragment, const KernelConfig& config,
                         std::string_view uname_version, VerifyReport& report);

}  // namespace rtpulse::kernel
