#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/fs_root.h"

namespace rtpulse {

/// One assignment in a kernel config file. `name` has no CONFIG_ prefix; `value` is the text
/// after '=' ("y", "m", "1000", "\"-rt\"") or "n" for a `# CONFIG_X is not set` line.
struct ConfigEntry {
  std::string name;
  std::string value;
  int line = 0;  ///< 1-based line number in the file it came from.
};

/// A parsed kernel .config or config fragment, in the kernel's own format: the one reader of
/// `rtpulse kernel verify` (strict) and of the audit and system info (lenient).
class KernelConfig {
 public:
  /// Parses `text` strictly. Blank lines and comments are skipped; any other line that is
  /// neither `CONFIG_X=value` nor `# CONFIG_X is not set` is an error naming `origin` and the
  /// line, and so is `CONFIG_X=` without a value. A name given twice keeps the last value (as
  /// Kconfig does) unless `reject_conflicts`, which fragments use: asking for two values of
  /// one option is a mistake to report.
  static Expected<KernelConfig> Parse(std::string_view text, std::string_view origin,
                                      bool reject_conflicts = false);
  /// Parses `text` leniently: the audit wants whatever it can learn, so a line the strict
  /// parser would refuse is skipped (`CONFIG_X=` is kept, with an empty value). Never fails.
  static KernelConfig ParseLenient(std::string_view text, std::string_view origin = "");

  /// The value of NAME (with or without the CONFIG_ prefix): "y", "m", "250", "\"-rt\"", or
  /// "n" when not set; nullopt when the file does not mention it.
  std::optional<std::string> Get(std::string_view name) const;
  /// True when NAME is "y" (built in).
  bool IsOn(std::string_view name) const;
  /// True when the file says NAME is off or does not mention it (Kconfig treats both alike).
  bool IsOff(std::string_view name) const;
  /// How many options the file sets (one per name).
  size_t size() const { return entries_.size(); }
  /// Entries in file order, one per name (the last assignment wins).
  const std::vector<ConfigEntry>& entries() const { return entries_; }
  /// Kernel version from the "# Linux/<arch> <version> Kernel Configuration" header that
  /// `make *config` writes ("6.12.117"); "" when the header is absent (e.g. a fragment).
  const std::string& version() const { return version_; }
  /// Architecture from the same header ("arm64", "x86"); "" when absent.
  const std::string& arch() const { return arch_; }
  /// Where the text came from, for messages.
  const std::string& origin() const { return origin_; }

 private:
  static Expected<KernelConfig> Read(std::string_view text, std::string_view origin, bool lenient,
                                     bool reject_conflicts);

  std::vector<ConfigEntry> entries_;
  std::unordered_map<std::string, size_t> index_;  ///< name -> position in entries_
  std::string version_;
  std::string arch_;
  std::string origin_;
};

/// Major and minor of a version string ("6.12.117-rt" -> {6, 12}); nullopt if unparsable.
std::optional<std::pair<int, int>> MajorMinor(std::string_view version);

/// How LoadKernelConfig treats what it cannot read.
enum class ConfigReading {
  /// A line the parser does not understand, or a corrupt /proc/config.gz, is an error:
  /// `rtpulse kernel verify` must not judge a config it read only half of.
  kStrict,
  /// Such lines are skipped and a corrupt /proc/config.gz falls back to /boot: the audit
  /// wants whatever it can learn.
  kLenient,
};

/// The configuration of the running kernel and the file it came from.
struct RunningKernelConfig {
  KernelConfig config;
  std::string source;  ///< "/proc/config.gz" or "/boot/config-<release>".
};

/// Reads the running kernel's config through `root`: /proc/config.gz first (the running
/// kernel's own, CONFIG_IKCONFIG_PROC), then /boot/config-<release>. When neither is
/// readable: a resource error "neither /proc/config.gz nor /boot/config-<release> is
/// readable" (in lenient mode preceded by why a corrupt /proc/config.gz was passed over).
Expected<RunningKernelConfig> LoadKernelConfig(const FsRoot& root, std::string_view release,
                                               ConfigReading reading);

}  // namespace rtpulse
