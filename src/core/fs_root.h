#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtpulse {

/// The whole file at `path` as given (a user's file; no root is prefixed), binary-safe;
/// nullopt when it cannot be opened or read, errno saying why.
std::optional<std::string> ReadWholeFile(const std::string& path);

/// Every read of /sys, /proc and /dev goes through one of these, so tests can point the
/// same code path at a fixture tree (a Raspberry Pi 5's /sys on an x86 VM).
class FsRoot {
 public:
  /// `root` is prefixed to every absolute path; "" (or "/") means the real filesystem.
  explicit FsRoot(std::string root = "");

  /// The process-wide root: $RTPULSE_SYSROOT if set (tests), else the real filesystem.
  static const FsRoot& System();
  /// The running kernel, never a fixture whatever $RTPULSE_SYSROOT says: for what this
  /// process does here and now (its own threads, its loads' children, /proc/stat while they
  /// run, the cache its buffers are sized for), which no fixture tree can stand in for.
  static const FsRoot& Live();

  std::string Path(std::string_view absolute) const;
  /// Whole file, or nullopt if it cannot be read.
  std::optional<std::string> Read(std::string_view absolute) const;
  /// First line without the trailing newline (and NULs, as in /proc/device-tree strings).
  std::optional<std::string> ReadLine(std::string_view absolute) const;
  bool Exists(std::string_view absolute) const;
  /// Names of the entries in a folder, sorted; empty when it is absent or not a folder.
  std::vector<std::string> List(std::string_view absolute) const;
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

}  // namespace rtpulse
