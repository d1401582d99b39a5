#include "cli/app.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string_view>

#include "cli/command.h"
#include "core/exit_code.h"
#include "core/file_owner.h"
#include "core/printable.h"
#include "core/suggest.h"
#include "core/version.h"
#include "results/killed_run.h"

namespace rtpulse::cli {
namespace {

constexpr std::array kCommands = {
    Command{"latency", "measure scheduling latency (cyclictest-compatible, and more)",
            &SetupLatency, OnStop::kPartial},
    Command{"noise",
            "OS noise: what a busy-polling thread per CPU loses, gap histograms and events "
            "(oslat-compatible)",
            &SetupNoise, OnStop::kPartial},
    Command{"hwlat",
            "hardware/firmware latency: busy loops whose gaps the kernel trace cannot attribute, "
            "MTBF, hard limit (hwlatdetect's options and report)",
            &SetupHwlat, OnStop::kPartial},
    Command{"suite", "run the scenario suite: pre-flight, loads, monitoring, latency, results tree",
            &SetupSuite, OnStop::kPartial},
    Command{"control",
            "run a 250 Hz flight-control job under scheduling policies and loads: response "
            "times, deadline misses, control cost",
            &SetupControl, OnStop::kPartial},
    Command{"e2e",
            "time a camera -> depth network -> decision -> alert pipeline per frame: stages, "
            "deadline misses, thread sweep",
            &SetupE2e, OnStop::kPartial},
    Command{"report", "figures, LaTeX tables and an HTML page from a run's results", &SetupReport},
    Command{"samples", "read a per-sample log written by 'latency --samples'", &SetupSamples},
    Command{"check", "audit the machine for real-time use: pass/warn/fail with fixes", &SetupCheck},
    Command{"monitor", "log temperatures, frequencies, throttling, power and load over time",
            &SetupMonitor, OnStop::kPartial},
    Command{"load",
            "run built-in loads, stress-ng or your own program and report what they achieved",
            &SetupLoad, OnStop::kPartial},
    Command{"kernel", "verify a kernel config against the PREEMPT_RT fragment", &SetupKernel},
    Command{"compare", "compare runs side by side: ratios, bootstrap CIs, KS test", &SetupCompare},
    Command{"wcet", "worst-case latency estimates (extreme value statistics) from samples",
            &SetupWcet},
    Command{"import", "turn cyclictest/jitterdebugger/rt-app/value files into a results folder",
            &SetupImport},
    Command{"serve",
            "measure without end and serve /metrics to Prometheus: latency histograms, misses, "
            "temperature, throttling, check results",
            &SetupServe, OnStop::kPartial},
};

constexpr const char* kExitCodes =
    "Exit codes: 0 ok, 1 failure, 2 bad usage or input (nothing written),\n"
    "            3 missing privilege or resource, 4 --budget not met (docs/budget.md) or\n"
    "            hwlat's --hardlimit exceeded,\n"
    "            130 interrupted (partial results written; latency: 0, as cyclictest).\n"
    "Docs: docs/ in the source tree (cli.md, suite.md, control.md, e2e.md, latency.md, report.md,\n"
    "      compare.md, import.md, wcet.md, check.md, loads.md, monitor.md, kernel.md, noise.md,\n"
    "      hwlat.md, result-json.md, budget.md, fleet.md).";

std::string g_invocation;

/// The signal mask the process started with, before Main held SIGINT and SIGTERM.
sigset_t g_mask_at_start;

/// SIGINT and SIGTERM, which Main holds from its first line: a command that writes partial
/// results (OnStop::kPartial) takes them in its own wait, so one sent while it parses, probes
/// the machine or opens its files ends in the same valid, interrupted result as one sent
/// mid-run. Any other command gets them back before it runs, and a pending one then acts.
void HoldStopSignals() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, &g_mask_at_start);
}

void ReleaseStopSignals() {
  pthread_sigmask(SIG_SETMASK, &g_mask_at_start, nullptr);
}

std::vector<std::string> CommandNames() {
  std::vector<std::string> names;
  for (const auto& c : kCommands) names.emplace_back(c.name);
  return names;
}

/// CLI11 2.1 has no suggestion for unknown subcommands; catch them before it parses.
int CheckCommandName(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return 0;
  const std::string word = argv[1];
  const auto names = CommandNames();
  if (std::find(names.begin(), names.end(), word) != names.end()) return 0;
  const std::string guess = DidYouMean(word, names);
  std::string message = fmt::format("unknown command '{}'", word);
  if (!guess.empty()) {
    message += fmt::format(". Did you mean '{}'?", guess);
  } else {
    message += fmt::format(" (commands: {}); see 'rtpulse --help'", fmt::join(names, ", "));
  }
  return ReportError(UsageError(message));
}

}  // namespace

std::string Invocation() {
  return g_invocation;
}

int ReportError(const Error& error) {
  // Messages quote input; whatever a quoting site missed is escaped here, so an error is one
  // line of text however binary the input (Printable is idempotent).
  std::fprintf(stderr, "rtpulse: error: %s\n", Printable(error.message).c_str());
  return ToInt(error.code);
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  return ClosestName(word, candidates);
}

std::unique_ptr<CLI::App> BuildApp(Runner& runner) {
  auto app = std::make_unique<CLI::App>(
      "rtpulse: measure, explain and prove the real-time behaviour of Linux machines", "rtpulse");
  app->footer(kExitCodes);
  app->set_version_flag("-V,--version", fmt::format("rtpulse {}", kVersion));
  app->require_subcommand(1);
  app->fallthrough(false);
  for (const auto& command : kCommands) {
    CLI::App* sub = app->add_subcommand(command.name, command.summary);
    sub->footer(kExitCodes);
    Runner run = command.setup(*sub);
    if (command.on_stop == OnStop::kDie) {
      run = [run] {
        ReleaseStopSignals();
        return run();
      };
    }
    sub->callback([&runner, run] { runner = run; });
  }
  return app;
}

const char* ExitCodesText() {
  return kExitCodes;
}

namespace {

/// `rtpulse __mark-killed RESULT PID`: what a tuning guardian runs after restoring for a
/// killed rtpulse (results/killed_run.h); its report on stdin. Not a user command.
int MarkKilledMain(int argc, char** argv) {
  if (argc != 4) return ReportError(UsageError("__mark-killed RESULT PID (run by the guardian)"));
  int pid = 0;
  const std::string_view pid_text = argv[3];
  const auto [end, ec] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
  if (ec != std::errc() || end != pid_text.data() + pid_text.size() || pid <= 0) {
    return ReportError(UsageError(fmt::format("__mark-killed: bad pid '{}'", Printable(pid_text))));
  }
  std::ostringstream text;
  text << std::cin.rdbuf();
  auto report = results::ParseGuardianReport(text.str());
  if (!report) return ReportError(report.error());
  auto marked = results::MarkKilled(argv[2], pid, *report);
  if (!marked) return ReportError(marked.error());
  std::fprintf(stderr, "rtpulse: tuning guardian: %s\n", Printable(*marked).c_str());
  return 0;
}

}  // namespace

int Main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == results::kMarkKilledCommand) {
    return MarkKilledMain(argc, argv);
  }
  HoldStopSignals();
  for (int i = 0; i < argc; ++i) g_invocation += (i == 0 ? "" : " ") + std::string(argv[i]);
  if (const int code = CheckCommandName(argc, argv); code != 0) return code;

  Runner runner;
  const std::unique_ptr<CLI::App> root = BuildApp(runner);
  CLI::App& app = *root;

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Every other parse problem is bad usage: one line, exit 2.
    std::string what = e.what();
    if (e.get_name() == "RequiredError" && argc < 2)
      what = "no command given; see 'rtpulse --help'";
    // cyclictest's -h/-H take the histogram's size: one reaching for help is told where it is.
    if ((what.starts_with("--histogram:") || what.starts_with("--histofall:")) &&
        what.find("missing") != std::string::npos) {
      what += " (-h US and -H US are cyclictest's histogram size, e.g. -h 400; help is --help)";
    }
    return ReportError(UsageError(what));
  }
  if (!runner) return ReportError(UsageError("no command given; see 'rtpulse --help'"));
  try {
    return runner();
  } catch (const std::exception& e) {
    return ReportError(Failure(e.what()));
  }
}

}  // namespace rtpulse::cli
