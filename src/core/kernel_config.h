#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/fs_root.h"

namespace rtpulse::sys {

/// The options of a kernel .config, read leniently: the audit wants whatever it can learn, so
/// lines it does not understand are skipped (`rtpulse kernel verify` is the strict reader).
class KernelConfig {
 public:
  /// Parses `CONFIG_X=value` and `# CONFIG_X is not set` lines (the latter become "n").
  static KernelConfig Parse(std::string_view text);

  /// The value of NAME (with or without the CONFIG_ prefix): "y", "m", "250", "\"-rt\"", or
  /// "n" when not set; nullopt when the file does not mention it.
  std::optional<std::string> Get(std::string_view name) const;
  /// True when NAME is built in ("y").
  bool IsOn(std::string_view name) const;
  /// True when the file says NAME is off or does not mention it (Kconfig treats both alike).
  bool IsOff(std::string_view name) const;
  size_t size() const { return options_.size(); }

 private:
  std::map<std::string, std::string, std::less<>> options_;  ///< name without CONFIG_
};

/// The configuration of the running kernel and the file it came from.
struct RunningKernelConfig {
  KernelConfig config;
  std::string source;  ///< "/proc/config.gz" or "/boot/config-<release>".
};

/// /proc/config.gz (the running kernel's own, CONFIG_IKCONFIG_PROC) first, then
/// /boot/config-<release>. nullopt when neither is readable; `problem` (if given) then says
/// why, e.g. a corrupt gzip file.
std::optional<RunningKernelConfig> LoadKernelConfig(const FsRoot& root, std::string_view release,
                                                    std::string* problem = nullptr);

}  // namespace rtpulse::sys
