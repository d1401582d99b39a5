#include "suite/suite_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/cpus.h"
#include "core/parse.h"
#include "core/run_cap.h"
#include "core/timestamp.h"
#include "export/textfile.h"
#include "stats/budget.h"
#include "suite/services.h"
#include "suite/suite_config.h"
#include "suite/timerlat_record.h"
#include "suite/tune_ab.h"
#include "sys/tuning.h"
#include "trace/session.h"

namespace rtpulse::suite {
namespace {

Expected<int64_t> PositiveTime(const std::string& option, const std::string& text, bool zero_ok) {
  auto ns = ParseDurationNs(text);
  if (!ns) return UsageError(fmt::format("{}: {}", option, ns.error().message));
  if (*ns < 0 || (*ns == 0 && !zero_ok)) {
    return UsageError(fmt::format("{} '{}' must be greater than 0 (e.g. 10s, 5m)", option, text));
  }
  return *ns;
}

/// The suite file (or the built-in one) and the scenarios chosen.
Expected<SuiteConfig> ChosenScenarios(const SuiteRequest& o, const std::vector<int>& online) {
  SuiteConfig c;
  if (!o.config.empty()) {
    auto config = LoadSuiteFile(o.config, online);
    if (!config) return config.error();
    c = std::move(*config);
  } else {
    c.source = "built-in";
    auto scenarios = DefaultScenarios(online);
    if (!scenarios) return scenarios.error();
    c.scenarios = std::move(*scenarios);
  }
  if (!o.scenarios.empty()) {
    auto chosen = SelectScenarios(c.scenarios, o.scenarios);
    if (!chosen) return chosen.error();
    c.scenarios = std::move(*chosen);
  }
  return c;
}

/// --quick, --duration, --settle and --monitor-interval over the file's times.
Status OverrideTimes(const SuiteRequest& o, SuiteConfig& c) {
  if (o.quick) {
    // About 10 s per scenario: 2 s settle + 8 s measured.
    c.duration_ns = 8 * kNsPerSec;
    c.settle_ns = 2 * kNsPerSec;
    for (auto& s : c.scenarios) {
      s.duration_ns.reset();
      s.settle_ns.reset();
    }
  }
  if (!o.duration.empty()) {
    auto d = PositiveTime("--duration", o.duration, false);
    if (!d) return d.error();
    c.duration_ns = *d;
    for (auto& s : c.scenarios) s.duration_ns.reset();
  }
  if (!o.settle.empty()) {
    auto d = PositiveTime("--settle", o.settle, true);
    if (!d) return d.error();
    c.settle_ns = *d;
    for (auto& s : c.scenarios) s.settle_ns.reset();
  }
  if (!o.monitor_interval.empty()) {
    auto d = PositiveTime("--monitor-interval", o.monitor_interval, false);
    if (!d) return d.error();
    c.monitor_interval_ns = *d;
  }
  return {};
}

/// RTPULSE_MAX_RUN_S (core/run_cap.h): every scenario's settle and measured time capped,
/// said in `notes` (the run's warnings).
Status CapTimes(SuiteConfig& c, std::vector<std::string>& notes) {
  auto cap = MaxRunNs();
  if (!cap) return cap.error();
  if (!*cap) return {};
  int64_t longest = c.duration_ns;
  int64_t settle = c.settle_ns;
  for (const auto& s : c.scenarios) {
    longest = std::max(longest, s.duration_ns.value_or(0));
    settle = std::max(settle, s.settle_ns.value_or(0));
  }
  if (longest <= **cap && settle <= **cap) return {};
  auto cap_one = [&](int64_t& ns) { ns = std::min(ns, **cap); };
  cap_one(c.duration_ns);
  cap_one(c.settle_ns);
  for (auto& s : c.scenarios) {
    if (s.duration_ns) cap_one(*s.duration_ns);
    if (s.settle_ns) cap_one(*s.settle_ns);
  }
  notes.push_back(
      MaxRunWarning("each scenario's settle and measurement",
                    fmt::format("up to {} and {}", MaxRunSeconds(settle), MaxRunSeconds(longest)),
                    MaxRunSeconds(**cap)));
  return {};
}

/// The suite's configuration: scenarios, times, the probes' priority, period and paths.
Expected<SuiteConfig> BuildConfig(const SuiteRequest& o, const std::vector<int>& online) {
  auto config = ChosenScenarios(o, online);
  if (!config) return config.error();
  SuiteConfig& c = *config;
  if (Status s = OverrideTimes(o, c); !s) return s.error();
  if (o.priority) c.priority = *o.priority;
  if (!o.interval.empty()) {
    auto i = ParseTimeNs(o.interval, kNsPerUs);
    if (!i) return UsageError("--interval: " + i.error().message);
    if (*i < 10 * kNsPerUs) {
      return UsageError(
          fmt::format("--interval '{}' is below 10us; give e.g. 1000 (us) or 1ms", o.interval));
    }
    c.interval_ns = *i;
  }
  if (!o.wake.empty()) {
    // timerlat runs after the list's other paths, as in `latency --wake`.
    const TimerlatWake wake = SplitTimerlatWake(o.wake);
    c.timerlat = wake.timerlat;
    c.wake.clear();
    if (!wake.others.empty()) {
      std::vector<std::string> also;
      if (trace::TracingCompiledIn()) also.emplace_back("timerlat");
      auto paths = measure::ParseWakeList(wake.others, also);
      if (!paths) return paths.error();
      c.wake = std::move(*paths);
    }
  }
  return config;
}

Expected<std::vector<int>> MeasuredCpus(const SuiteRequest& o, const std::vector<int>& online) {
  if (o.cpus.empty()) return online;
  auto cpus = ParseCpuList(o.cpus);
  if (!cpus) return UsageError("--cpus: " + cpus.error().message);
  for (const int cpu : *cpus) {
    if (std::find(online.begin(), online.end(), cpu) == online.end()) {
      return UsageError(fmt::format("--cpus '{}': CPU {} is not online (online: {})", o.cpus, cpu,
                                    FormatCpuList(online)));
    }
  }
  return *cpus;
}

/// --tune, --no-rt-throttling, --tune-ab and --ab-pairs together.
Status CheckTuning(const SuiteRequest& o, const SuiteConfig& c) {
  if (o.rt_throttling_off && !o.tune && !o.tune_ab) {
    return UsageError("--no-rt-throttling is a tuning: add --tune (or --tune-ab)");
  }
  if (o.tune && o.tune_ab) {
    return UsageError(
        "--tune and --tune-ab exclude each other: --tune-ab switches each tuning on and off by "
        "block; drop --tune");
  }
  if (o.ab_pairs && !o.tune_ab) return UsageError("--ab-pairs needs --tune-ab");
  if (o.ab_pairs && (*o.ab_pairs < 1 || *o.ab_pairs > 1000)) {
    return UsageError(
        fmt::format("--ab-pairs {} must be between 1 and 1000 (at least {} for an "
                    "interval; default {})",
                    *o.ab_pairs, kAbMinPairs, kAbDefaultPairs));
  }
  if (o.tune_ab && c.wake.size() != 1) {
    return UsageError(
        "--tune-ab compares one wake path per block: give --wake with one path (e.g. --wake "
        "abs)");
  }
  return {};
}

/// The runner's side: CPUs, checkpoints, tunings, budget, textfile, identity.
Status BuildRunnerPlan(const SuiteRequest& o, SuitePlan& p) {
  auto checkpoint = PositiveTime("--checkpoint-interval", o.checkpoint_interval, false);
  if (!checkpoint) return checkpoint.error();
  if (*checkpoint > 10 * kNsPerSec) {
    return UsageError(
        fmt::format("--checkpoint-interval '{}' is above 10s: a killed run must lose at most 10 s",
                    o.checkpoint_interval));
  }
  p.checkpoint_ns = *checkpoint;
  auto cpus = MeasuredCpus(o, p.online);
  if (!cpus) return cpus.error();
  p.cpus = std::move(*cpus);
  if (Status s = CheckTuning(o, p.config); !s) return s;
  if (!o.budget.empty()) {
    auto budget = stats::ParseBudget(o.budget);
    if (!budget) return UsageError("--budget: " + budget.error().message);
    p.budget = *budget;
  }
  if (!o.textfile.empty()) {
    if (Status s = exporter::CheckTextfileDir(o.textfile); !s) return s;
    p.textfile_dir = o.textfile;
  }
  p.strict = o.strict;
  p.tune = o.tune;
  p.invocation = o.invocation;
  p.version = o.version;
  return {};
}

/// The probes: one SCHED_FIFO thread per measured CPU, the same settings in every scenario.
Status BuildProbes(const SuiteRequest& o, LatencySuitePlan& plan) {
  const SuitePlan& p = plan.suite;
  LatencySettings& l = plan.latency;
  l.cpus = p.cpus;
  l.priority = p.config.priority;
  l.interval_ns = p.config.interval_ns;
  l.wake = p.config.wake;
  l.samples = o.samples;
  if (o.explain) {
    l.explain = *o.explain;
    l.explain->session.cpus = l.cpus;
    l.verdict_line = o.verdict_line;
  }
  if (o.wake.find("all") != std::string::npos) {
    measure::DropOnePerProcessPaths(l.wake, l.cpus.size(), l.notes);
  }
  auto latency = SuiteLatencyPlan(l);
  if (!latency) return latency.error();
  if (p.config.timerlat) {
    if (o.explain) {
      return UsageError(
          "--explain with --wake timerlat: the suite explains its own probes' samples, not the "
          "tracer's; drop timerlat from --wake, or use 'rtpulse latency --wake timerlat "
          "--explain US'");
    }
    if (o.samples && l.wake.empty()) {
      return UsageError(
          "--samples with --wake timerlat alone: the tracer's samples stay in its trace, so "
          "there is nothing to log; add a probe path (e.g. --wake abs,timerlat) or drop "
          "--samples");
    }
    // Checked now (exit 3 when the kernel has no timerlat tracer), run per scenario.
    auto timerlat = BuildTimerlatPlan(*latency, p.online);
    if (!timerlat) return timerlat.error();
    l.timerlat = std::move(*timerlat);
  }
  plan.latency_plan = std::move(*latency);
  return {};
}

}  // namespace

Expected<LatencySuitePlan> BuildLatencySuitePlan(const SuiteRequest& request, const FsRoot& root) {
  LatencySuitePlan plan;
  SuitePlan& p = plan.suite;
  p.online = OnlineCpus(root);
  auto config = BuildConfig(request, p.online);
  if (!config) return config.error();
  p.config = std::move(*config);
  if (Status s = CapTimes(p.config, plan.latency.notes); !s) return s.error();
  if (Status s = BuildRunnerPlan(request, p); !s) return s.error();
  if (Status s = BuildProbes(request, plan); !s) return s.error();
  p.out_dir = request.out.empty() ? "rtpulse_" + RunFolderStamp() : request.out;
  if (Status s = CheckOutputFolder(p.out_dir); !s) return s.error();
  return plan;
}

Status PlanTuneAb(const FsRoot& root, bool rt_throttling_off, int pairs, SuitePlan& plan) {
  std::vector<AbKnob> knobs;
  for (const sys::TuneKnob knob : sys::kTuneKnobs) {
    if (knob == sys::TuneKnob::kRtThrottling && !rt_throttling_off) {
      knobs.push_back(
          KnobNotTried(knob,
                       "RT throttling off lets a runaway real-time thread starve its CPU; add "
                       "--no-rt-throttling to measure it"));
      continue;
    }
    auto applied = ApplyKnob(root, knob, plan.cpus, plan.online, "");
    if (!applied) return applied.error();
    const nlohmann::json records = (*applied)->ToJson();
    if (Status restored = (*applied)->Restore(); !restored) return restored;
    knobs.push_back(KnobFromRecords(knob, records));
  }
  plan.tune_ab = ExpandTuneAb(plan.config, std::move(knobs), pairs);
  if (plan.tune_ab->blocks.empty()) {
    std::string why;
    for (const auto& k : plan.tune_ab->knobs) {
      why += fmt::format("{} {}: {}", why.empty() ? "" : ";", sys::TuneKnobName(k.knob), k.detail);
    }
    return Error{ExitCode::kResource,
                 "--tune-ab: no tuning applies on this machine, nothing to compare (run as root, "
                 "and give --cpus a subset so IRQs can move):" +
                     why};
  }
  return {};
}

}  // namespace rtpulse::suite
