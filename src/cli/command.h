#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "load/load.h"
#include "results/latency_result.h"
#include "sys/system_info.h"

namespace rtpulse::cli {

/// What a subcommand runs once its options are parsed; returns the process exit code.
using Runner = std::function<int()>;

/// How a command ends on SIGINT or SIGTERM.
enum class OnStop {
  kDie,      ///< the default action: nothing of value is half-written
  kPartial,  ///< taken synchronously; partial results are written, exit 130
};

/// One row of the command table (the ninja "tool table"): adding a command touches its own
/// file and one line in app.cc.
struct Command {
  const char* name;
  const char* summary;
  /// Declares the subcommand's options on `sub` and returns what to run after parsing.
  Runner (*setup)(CLI::App& sub);
  OnStop on_stop = OnStop::kDie;
};

/// Prints "rtpulse: error: <message>" to stderr and returns the error's exit code.
int ReportError(const Error& error);

/// The command line this process was started with, space-joined (for result files).
std::string Invocation();

/// Closest of `candidates` to `word` by edit distance, or "" when nothing is close.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

// Command setups, one per file.
Runner SetupLatency(CLI::App& sub);
Runner SetupSamples(CLI::App& sub);
Runner SetupCheck(CLI::App& sub);
Runner SetupLoad(CLI::App& sub);
Runner SetupMonitor(CLI::App& sub);
Runner SetupKernel(CLI::App& sub);
Runner SetupSuite(CLI::App& sub);
Runner SetupControl(CLI::App& sub);
Runner SetupE2e(CLI::App& sub);
Runner SetupCompare(CLI::App& sub);
Runner SetupImport(CLI::App& sub);
Runner SetupReport(CLI::App& sub);
Runner SetupWcet(CLI::App& sub);
Runner SetupServe(CLI::App& sub);
Runner SetupNoise(CLI::App& sub);
Runner SetupHwlat(CLI::App& sub);

}  // namespace rtpulse::cli
