#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace rtpulse::sys {

/// What an external command printed and how it ended.
struct CommandOutput {
  int exit_code = -1;  ///< Exit status, 128 + signal when killed, -1 on timeout.
  bool timed_out = false;
  std::string out;  ///< stdout (at most kMaxOutputBytes).
  std::string err;  ///< stderr (at most kMaxOutputBytes).
};

/// External programs the audit asks (vcgencmd, stress-ng, cyclictest). An interface so unit
/// tests can answer with canned output; the end-to-end tests instead put fake scripts first
/// on PATH, which exercises the same code path the Raspberry Pi does.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  /// Absolute path of NAME found on $PATH (or NAME itself when it contains '/' and is
  /// executable); "" when absent.
  virtual std::string Find(std::string_view name) const = 0;
  /// Runs argv (argv[0] looked up with Find) with stdin from /dev/null, capturing stdout and
  /// stderr. A program that outlives `timeout` is killed (with its process group). Error when
  /// the program is absent or cannot be started.
  virtual Expected<CommandOutput> Run(const std::vector<std::string>& argv,
                                      std::chrono::milliseconds timeout) const = 0;
};

/// The real thing: searches $PATH and starts the program with posix_spawn.
class SystemCommandRunner final : public CommandRunner {
 public:
  static constexpr size_t kMaxOutputBytes = 1 << 20;

  std::string Find(std::string_view name) const override;
  Expected<CommandOutput> Run(const std::vector<std::string>& argv,
                              std::chrono::milliseconds timeout) const override;
};

}  // namespace rtpulse::sys
