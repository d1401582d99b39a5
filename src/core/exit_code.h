#pragma once

namespace rtpulse {

/// Process exit codes by cause. Documented in `rtpulse --help` and docs/cli.md; scripts rely
/// on them, so never renumber.
enum class ExitCode : int {
  kOk = 0,        ///< Everything asked for was done.
  kFailure = 1,   ///< A run or a write failed at run time.
  kUsage = 2,     ///< Bad usage or bad input; nothing was written.
  kResource = 3,  ///< Missing privilege or resource (root, tracefs, a device).
  /// A --budget was given and the results do not show it met (a FAIL or an UNDECIDED
  /// scenario, or nothing measured); everything else was done (docs/budget.md).
  kBudgetNotMet = 4,
  kInterrupted = 130  ///< Stopped by SIGINT/SIGTERM; partial results were written.
};

constexpr int ToInt(ExitCode code) {
  return static_cast<int>(code);
}

}  // namespace rtpulse
