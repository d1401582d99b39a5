#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.h"

namespace rtpulse::kernel {

/// One assignment in a kernel config file. `name` has no CONFIG_ prefix; `value` is the text
/// after '=' ("y", "m", "1000", "\"-rt\"") or "n" for a `# CONFIG_X is not set` line.
struct ConfigEntry {
  std::string name;
  std::string value;
  int line = 0;  ///< 1-based line number in the file it came from.
};

/// A parsed kernel .config or config fragment, in the kernel's own format.
class KernelConfig {
 public:
  /// Parses `text`. Blank lines and comments are skipped; any other line that is neither
  /// `CONFIG_X=value` nor `# CONFIG_X is not set` is an error naming `origin` and the line.
  /// A name given twice keeps the last value (as Kconfig does) unless `reject_conflicts`,
  /// which fragments use: asking for two values of one option is a mistake to report.
  static Expected<KernelConfig> Parse(std::string_view text, std::string_view origin,
                                      bool reject_conflicts = false);

  /// The value of NAME (no CONFIG_ prefix): "n" when set to off, nullopt when absent.
  std::optional<std::string> Get(std::string_view name) const;
  /// True when NAME is "y" (built in).
  bool IsOn(std::string_view name) const;
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
  std::vector<ConfigEntry> entries_;
  std::unordered_map<std::string, size_t> index_;  ///< name -> position in entries_
  std::string version_;
  std::string arch_;
  std::string origin_;
};

/// Major and minor of a version string ("6.12.117-rt" -> {6, 12}); nullopt if unparsable.
std::optional<std::pair<int, int>> MajorMinor(std::string_view version);

}  // namespace rtpulse::kernel
