#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace rtpulse {

/// What an external command printed and how it ended.
struct CommandOutput {
  int exit_code = -1;  ///< Exit status, 128 + signal when killed, -1 on timeout.
  bool timed_out = false;
  std::string out;      ///< stdout (at most SystemCommandRunner::kMaxOutputBytes).
  std::string err;      ///< stderr (at most SystemCommandRunner::kMaxOutputBytes).
  int term_signal = 0;  ///< The signal that ended it (exit_code is then 128 + it); 0 if none.
};

/// External programs rtpulse asks (vcgencmd, gnuplot, stress-ng, cyclictest). An interface so
/// unit tests can answer with canned output; the end-to-end tests instead put fake scripts
/// first on the search path, which exercises the same code path the Raspberry Pi does. The
/// one runner of the project: `check`, `monitor`, `report`, `wcet` and `suite` all use it.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  /// Absolute path of NAME found on the search path (or NAME itself when it contains '/' and
  /// is an executable file); "" when absent.
  virtual std::string Find(std::string_view name) const = 0;
  /// Runs argv (argv[0] looked up with Find) with stdin from /dev/null, capturing stdout and
  /// stderr. A program that outlives `timeout` is killed (with its process group) and
  /// reported as timed out, not as an error. Error when the program is absent (a resource
  /// error) or cannot be started.
  virtual Expected<CommandOutput> Run(const std::vector<std::string>& argv,
                                      std::chrono::milliseconds timeout) const = 0;
};

/// The real thing: searches the path and starts the program with posix_spawn. The child gets
/// its own process group (a Ctrl-C meant for rtpulse does not kill a half-finished vcgencmd,
/// and a timeout kills its grandchildren too), an empty signal mask and default signal
/// dispositions, whatever the caller had.
class SystemCommandRunner final : public CommandRunner {
 public:
  /// Output beyond this (per stream) is read and dropped, so a runaway program cannot
  /// exhaust memory.
  static constexpr size_t kMaxOutputBytes = 1 << 20;

  /// `search_path`: colon-separated folders to search instead of $PATH; "" searches $PATH
  /// as it is at each Find (or execvp's default when it is unset).
  explicit SystemCommandRunner(std::string search_path = "");

  std::string Find(std::string_view name) const override;
  Expected<CommandOutput> Run(const std::vector<std::string>& argv,
                              std::chrono::milliseconds timeout) const override;

 private:
  std::string search_path_;
};

/// Runs argv and returns its stdout, for callers that only want the answer of a program
/// that should succeed (vcgencmd). Errors name the cause: "'X' not found on PATH",
/// "'X' timed out after N ms", or "'X args' failed (exit status N): <first stdout line>".
Expected<std::string> RunForStdout(const CommandRunner& runner,
                                   const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout);

}  // namespace rtpulse
