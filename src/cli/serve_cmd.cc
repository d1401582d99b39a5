// `rtpulse serve`: continuous latency probes and the monitor behind a read-only /metrics
// endpoint for Prometheus (docs/fleet.md).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/latency_options.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/command_runner.h"
#include "core/fs_root.h"
#include "core/parse.h"
#include "core/run_cap.h"
#include "core/version.h"
#include "measure/engine.h"
#include "measure/rt_setup.h"
#include "monitor/sources.h"
#include "results/cyclictest_format.h"
#include "results/latency_result.h"
#include "suite/facts.h"
#include "suite/serve.h"
#include "sys/check.h"
#include "sys/process_facts.h"
#include "sys/system_info.h"

namespace rtpulse::cli {
namespace {

struct ServeOptions {
  std::string cpus;  ///< "" = every online CPU.
  int64_t interval_us = 1000;
  int priority = 80;
  std::string wake = "abs";
  std::string listen = "127.0.0.1:9464";
  std::string refresh = "1s";
  std::string monitor_interval = "5s";
  std::string inject;
  std::string duration = "0";
  std::string json;
  int64_t max_connections = 32;
  bool quiet = false;
};

Expected<suite::ServePlan> BuildServePlan(const ServeOptions& o, const std::vector<int>& online) {
  suite::ServePlan plan;
  std::vector<int> cpus = online;
  if (!o.cpus.empty()) {
    auto parsed = ParseCpuList(o.cpus);
    if (!parsed) return UsageError("--cpus: " + parsed.error().message);
    if (Status s = CheckCpusOnline(*parsed, online, "--cpus"); !s) return s.error();
    cpus = *parsed;
  }
  if (o.priority < 1 || o.priority > 99) {
    return UsageError(fmt::format("--priority {}: use 1..99 (SCHED_FIFO)", o.priority));
  }
  if (o.interval_us < 100 || o.interval_us > 1'000'000) {
    return UsageError(
        fmt::format("-i {}: use 100..1000000 us (serve runs for months: 1000 us is 1 kHz per CPU)",
                    o.interval_us));
  }
  const auto wake = measure::WakePathFromName(o.wake);
  const measure::WakePathTraits* traits = wake ? measure::FindWakePathTraits(*wake) : nullptr;
  if (traits == nullptr || !measure::SuitsContinuousService(*traits)) {
    std::vector<std::string_view> served;
    for (const auto& row : measure::kWakePathTable) {
      if (measure::SuitsContinuousService(row)) served.push_back(row.name);
    }
    return UsageError(fmt::format(
        "--wake '{}': serve takes one of {} (busy spins a whole CPU; deadline, itimer and gpio: "
        "use rtpulse latency)",
        o.wake, fmt::join(served, ", ")));
  }
  plan.latency.threads =
      measure::PinnedThreads(cpus, SchedPolicy::kFifo, o.priority, o.interval_us * kNsPerUs);
  plan.latency.paths = {*wake};
  auto duration = ParseDurationNs(o.duration);
  if (!duration) return UsageError("-D: " + duration.error().message);
  plan.latency.duration_ns = *duration;
  if (Status s = CapRunDuration(plan.latency.duration_ns, "-D",
                                *duration == 0 ? "no end" : o.duration, plan.latency.notes);
      !s) {
    return s.error();
  }
  if (!o.inject.empty()) {
    auto inject = ParseInject(o.inject);
    if (!inject) return inject.error();
    if (o.priority >= 99) {
      return UsageError("--inject needs --priority 1..98 so the injector can run above the probes");
    }
    plan.latency.inject = *inject;
  }
  auto listen = exporter::ParseListenAddress(o.listen);
  if (!listen) return listen.error();
  plan.http.listen = *listen;
  if (o.max_connections < 1 || o.max_connections > 4096) {
    return UsageError(fmt::format("--max-connections {}: use 1..4096", o.max_connections));
  }
  plan.http.max_connections = static_cast<unsigned>(o.max_connections);
  plan.http.cpus = suite::ServerCpus(plan.latency, online);
  auto refresh = ParseTimeNs(o.refresh, kNsPerSec);
  if (!refresh) return UsageError("--refresh: " + refresh.error().message);
  if (*refresh < 100 * kNsPerMs) {
    return UsageError(fmt::format("--refresh {}: use 100ms or more", o.refresh));
  }
  plan.refresh_ns = *refresh;
  if (!o.json.empty() && o.json != "-") {
    if (Status s = CheckWritable(o.json); !s) {
      return Error{s.error().code, "--json: " + s.error().message};
    }
  }
  return plan;
}

exporter::Labels SystemLabels(const sys::SystemInfo& info) {
  return {{"version", kVersion},
          {"kernel_release", info.release},
          {"preemption_model", info.preemption_model.empty() ? "unknown" : info.preemption_model},
          {"preempt_rt", info.preempt_rt ? "true" : "false"},
          {"board", info.board},
          {"machine", info.machine},
          {"hypervisor", info.hypervisor}};
}

int RunServeCommand(const ServeOptions& o) {
  // Before any thread: the HTTP server's and the helpers' stacks, all locked, stay small.
  measure::SetDefaultThreadStack(measure::kHelperThreadStackBytes);
  const sys::SystemInfo info = sys::ProbeSystem(FsRoot::System());
  auto plan = BuildServePlan(o, info.online_cpus);
  if (!plan) return ReportError(plan.error());
  auto interval = ParseTimeNs(o.monitor_interval, kNsPerSec);
  if (!interval || *interval <= 0) {
    return ReportError(UsageError(fmt::format(
        "--monitor-interval '{}': give a time above 0, e.g. 5s or 500ms", o.monitor_interval)));
  }

  suite::ServeMachine machine;
  machine.system_labels = SystemLabels(info);
  machine.warnings = sys::EnvironmentWarnings(info);
  std::vector<int> cpus;  // the probes'
  for (const auto& t : plan->latency.threads) cpus.push_back(t.cpu);
  // With every CPU probed, the server has no housekeeping CPU of its own.
  std::vector<int> shared;
  for (int cpu : plan->http.cpus) {
    if (std::ranges::find(cpus, cpu) != cpus.end()) shared.push_back(cpu);
  }
  if (!shared.empty()) {
    machine.warnings.push_back(fmt::format(
        "the /metrics server runs on CPU {}, beside a probe (every CPU given to --cpus is "
        "probed): leave one CPU out of --cpus so scrapes never run next to a probe",
        FormatCpuList(shared)));
  }
  const SystemCommandRunner commands;
  const sys::CheckContext context(FsRoot::System(), commands, sys::ProbeProcess());
  for (const sys::CheckResult& c : sys::RunChecks(context)) {
    machine.checks.push_back({c.id, c.area, std::string(sys::StatusName(c.status))});
  }
  machine.checks_ran_unix_s = static_cast<double>(ClockNs(CLOCK_REALTIME)) / 1e9;

  // Every thread from here on (monitor, server, probes) inherits the blocked signals, so
  // SIGINT/SIGTERM reach the engine's synchronous wait.
  measure::BlockRunSignals();
  monitor::SamplerOptions sampler_options;
  sampler_options.interval_ns = *interval;
  auto sampler = monitor::Sampler::Open("", sampler_options,
                                        monitor::DefaultSources(FsRoot::System(), commands));
  if (!sampler) return ReportError(sampler.error());
  machine.monitor = std::move(*sampler);
  const std::vector<std::string> warnings = machine.warnings;

  // With --json - the JSON alone goes to stdout; the banner and summary to stderr.
  std::FILE* text = o.json == "-" ? stderr : stdout;
  // The warnings once the address is bound: a port in use is one error line and nothing else.
  auto outcome = suite::RunServe(*plan, std::move(machine), [&](const std::string& where) {
    for (const auto& w : warnings) fmt::print(stderr, "rtpulse: warning: {}\n", w);
    if (o.quiet) return;
    fmt::print(text,
               "rtpulse serve: http://{}/metrics  (probes on CPU {} every {} us, SCHED_FIFO {}, "
               "wake {}; server on CPU {}; Ctrl-C or SIGTERM stops)\n",
               where, FormatCpuList(cpus), o.interval_us, o.priority, o.wake,
               FormatCpuList(plan->http.cpus));
    std::fflush(text);
  });
  if (!outcome) return ReportError(outcome.error());
  results::LatencyRun& run = outcome->run;
  run.rtpulse_version = kVersion;
  run.cmdline = Invocation();
  suite::FillSystem(info, run);
  run.warnings.insert(run.warnings.end(), warnings.begin(), warnings.end());
  if (!o.quiet) {
    fmt::print(text, "{}", results::FormatSummary(run));
    fmt::print(text, "# serve: {} scrapes of /metrics answered, {} snapshots published\n",
               outcome->http.metrics_served, outcome->snapshots);
  }
  int exit_code = ToInt(ExitCode::kOk);
  if (!o.json.empty()) {
    const std::string document = results::ToJson(run, false).dump(2) + "\n";
    if (o.json == "-") {
      std::fputs(document.c_str(), stdout);
    } else if (Status s = WriteFileAtomic(o.json, document); !s) {
      exit_code = ReportError(s.error());
    }
  }
  return exit_code;
}

}  // namespace

Runner SetupServe(CLI::App& sub) {
  auto o = std::make_shared<ServeOptions>();
  sub.add_option("--cpus", o->cpus,
                 "CPUs to probe, one SCHED_FIFO thread each (default: every online CPU)");
  sub.add_option("-i,--interval", o->interval_us, "probe period in us (default 1000)");
  sub.add_option("-p,--priority", o->priority, "SCHED_FIFO priority of the probes (default 80)");
  sub.add_option("--wake", o->wake,
                 "wake path: abs, rel, timerfd, posix, epoll or xthread (default abs)");
  sub.add_option(
      "--listen", o->listen,
      "HOST:PORT to serve /metrics on (default 127.0.0.1:9464; 0.0.0.0:9464 exposes it)");
  sub.add_option("--refresh", o->refresh,
                 "how often the probes' histograms are copied for scrapes (default 1s)");
  sub.add_option("--monitor-interval", o->monitor_interval,
                 "temperature/frequency/throttling/power sampling period (default 5s)");
  sub.add_option("--inject", o->inject,
                 "ground truth: a higher-priority spin of DELAY at RATE on each probed CPU, e.g. "
                 "2ms@10Hz");
  sub.add_option("-D,--duration", o->duration,
                 "stop after this long (default 0: until SIGINT or SIGTERM)");
  sub.add_option("--json", o->json, "at the end, the whole run as latency --json writes it");
  sub.add_option("--max-connections", o->max_connections,
                 "HTTP connections open at once (default 32); more are refused");
  sub.add_flag("-q,--quiet", o->quiet, "print nothing but errors");
  sub.allow_extras(false);
  return [o] { return RunServeCommand(*o); };
}

}  // namespace rtpulse::cli
