// `rtpulse monitor`: the low-priority sampler on its own (temperatures, frequencies,
// throttling, power, load, CPU use, memory, IRQ/softirq rates, steal), docs/monitor.md.

#include <fmt/format.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/command_runner.h"
#include "core/file_owner.h"
#include "core/fs_root.h"
#include "core/parse.h"
#include "measure/engine.h"
#include "monitor/sampler.h"
#include "monitor/sources.h"

namespace rtpulse::cli {
namespace {

struct MonitorOptions {
  std::string interval = "5s";
  std::string duration = "0";
  std::string out = ".";
  std::vector<double> thresholds_c{80, 85};
};

struct MonitorPlan {
  monitor::SamplerOptions sampler;
  int64_t duration_ns = 0;
  std::string csv_path;
  std::string stats_path;
};

Expected<MonitorPlan> Validate(const MonitorOptions& o) {
  MonitorPlan plan;
  auto interval = ParseTimeNs(o.interval, kNsPerSec);
  if (!interval) return UsageError("--interval: " + interval.error().message);
  if (*interval <= 0) return UsageError("--interval must be greater than 0 (e.g. 5s or 500ms)");
  plan.sampler.interval_ns = *interval;
  plan.sampler.thresholds_c = o.thresholds_c;
  auto duration = ParseDurationNs(o.duration);
  if (!duration) return UsageError("--duration: " + duration.error().message);
  plan.duration_ns = *duration;
  if (Status s = CreateFolders(o.out); !s) {
    return Error{s.error().code, fmt::format("--out '{}': {}", o.out, s.error().message)};
  }
  plan.csv_path = o.out + "/thermal_power_log.csv";
  plan.stats_path = o.out + "/power_thermal_stats.txt";
  for (const auto& path : {plan.csv_path, plan.stats_path}) {
    if (Status s = CheckWritable(path); !s) {
      return Error{s.error().code, "--out: " + s.error().message};
    }
  }
  return plan;
}

/// Waits for SIGINT/SIGTERM (blocked in every thread) until `deadline_ns`; true if one came.
bool WaitForStopSignal(int64_t deadline_ns) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  for (;;) {
    const int64_t left_ns = deadline_ns - MonotonicNs();
    if (left_ns <= 0) return false;
    const timespec timeout = ToTimespec(std::min<int64_t>(left_ns, kNsPerSec));
    const int sig = sigtimedwait(&set, nullptr, &timeout);
    if (sig == SIGINT || sig == SIGTERM) return true;
  }
}

int RunMonitor(const MonitorOptions& options) {
  auto plan = Validate(options);
  if (!plan) return ReportError(plan.error());
  // Before the sampler thread exists, so it inherits the mask and signals reach only
  // sigtimedwait below.
  measure::BlockRunSignals();
  const SystemCommandRunner runner;
  auto sampler = monitor::Sampler::Open(plan->csv_path, plan->sampler,
                                        monitor::DefaultSources(FsRoot::System(), runner));
  if (!sampler) return ReportError(sampler.error());
  for (const auto& note : (*sampler)->notes()) fmt::print(stderr, "rtpulse: note: {}\n", note);
  fmt::print(stderr, "rtpulse: monitoring {} columns every {} ms into {}{}\n",
             (*sampler)->columns().size(), plan->sampler.interval_ns / kNsPerMs, plan->csv_path,
             plan->duration_ns > 0 ? "" : " (Ctrl-C to stop)");

  (*sampler)->Start();
  const int64_t deadline = plan->duration_ns > 0 ? MonotonicNs() + plan->duration_ns : INT64_MAX;
  const bool interrupted = WaitForStopSignal(deadline);
  const Status logged = (*sampler)->Stop();
  if (Status s = (*sampler)->WriteStats(plan->stats_path, interrupted); !s) {
    return ReportError(s.error());
  }
  if (!logged) return ReportError(logged.error());
  fmt::print("{}", (*sampler)->StatsText(interrupted));
  fmt::print(stderr, "rtpulse: wrote {} and {}\n", plan->csv_path, plan->stats_path);
  return ToInt(interrupted ? ExitCode::kInterrupted : ExitCode::kOk);
}

}  // namespace

Runner SetupMonitor(CLI::App& sub) {
  auto options = std::make_shared<MonitorOptions>();
  sub.add_option("--interval,--monitor-interval", options->interval,
                 "time between samples, e.g. 5s, 500ms (a bare number is seconds)")
      ->capture_default_str();
  sub.add_option("--duration,-D", options->duration,
                 "how long to monitor: 30s, 5m, 1h (0: until Ctrl-C or SIGTERM)")
      ->capture_default_str();
  sub.add_option("--out,-o", options->out,
                 "folder for thermal_power_log.csv and power_thermal_stats.txt (created)")
      ->capture_default_str();
  sub.add_option("--temp-threshold", options->thresholds_c,
                 "temperatures (C) whose time-at-or-above is reported; default 80 85 (the Pi 5 "
                 "soft and hard limits)")
      ->delimiter(',');
  return [options] { return RunMonitor(*options); };
}

}  // namespace rtpulse::cli
