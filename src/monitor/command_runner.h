#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/error.h"

namespace rtpulse::monitor {

/// Runs an external command and returns its standard output. The seam that lets tests put
/// a fake `vcgencmd` on PATH and still exercise the code path a Raspberry Pi uses.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  /// Full path of `program` found on the search path, or "" when it is not there.
  virtual std::string Find(const std::string& program) const = 0;
  /// Runs argv (argv[0] searched on the path); the output, or an error naming the cause
  /// (not found, timed out, non-zero exit with its output).
  virtual Expected<std::string> Run(const std::vector<std::string>& argv) = 0;
};

/// posix_spawn with a stdout pipe and a timeout. The child gets its own process group (a
/// Ctrl-C meant for rtpulse does not kill a half-finished vcgencmd), an empty signal mask,
/// stdin and stderr on /dev/null; on timeout the group is killed.
class ProcessRunner : public CommandRunner {
 public:
  /// `search_path`: colon-separated folders; nullopt-like "" uses $PATH.
  explicit ProcessRunner(std::string search_path = "", int64_t timeout_ns = 2 * kNsPerSec);
  std::string Find(const std::string& program) const override;
  Expected<std::string> Run(const std::vector<std::string>& argv) override;

 private:
  std::string search_path_;
  int64_t timeout_ns_;
};

}  // namespace rtpulse::monitor
