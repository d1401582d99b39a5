// rtpulse suite: parses the options into a typed plan and hands it to the scenario runner
// (src/suite/runner.h), which does the work; this file only draws its progress and prints the
// summary.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/explain_text.h"
#include "cli/latency_options.h"
#include "cli/live_view.h"
#include "cli/scenario_progress.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/command_runner.h"
#include "core/cpus.h"
#include "core/exit_code.h"
#include "core/fs_root.h"
#include "core/parse.h"
#include "core/timestamp.h"
#include "core/version.h"
#include "export/textfile.h"
#include "measure/engine.h"
#include "results/budget_verdict.h"
#include "results/cyclictest_format.h"
#include "stats/budget.h"
#include "suite/latency_workload.h"
#include "suite/runner.h"
#include "suite/services.h"
#include "suite/tune_ab.h"
#include "sys/check.h"
#include "sys/process_facts.h"
#include "sys/system_info.h"
#include "sys/tuning.h"

namespace rtpulse::cli {
namespace {

struct SuiteOptions {
  std::string config;
  std::string duration;
  std::string settle;
  bool quick = false;
  std::string scenarios;
  std::string out;
  std::string cpus;
  std::optional<int> priority;
  std::string interval;
  std::string wake;
  std::string monitor_interval;
  std::string checkpoint_interval = "10s";
  bool tune = false;
  bool rt_throttling_off = false;
  bool tune_ab = false;
  std::optional<int> ab_pairs;
  bool strict = false;
  bool samples = false;
  std::string explain;         ///< --explain US
  std::string explain_events;  ///< --explain-events lean|full ("" = lean)
  bool quiet = false;
  bool list = false;
  std::string budget;
  std::string textfile;  ///< --textfile DIR
};

/// The runner's plan plus what the latency workload needs.
struct Plan {
  suite::SuitePlan suite;
  suite::LatencySettings latency;
  measure::LatencyPlan latency_plan;
};

Expected<int64_t> PositiveTime(const std::string& option, const std::string& text, bool zero_ok) {
  auto ns = ParseDurationNs(text);
  if (!ns) return UsageError(fmt::format("{}: {}", option, ns.error().message));
  if (*ns < 0 || (*ns == 0 && !zero_ok)) {
    return UsageError(fmt::format("{} '{}' must be greater than 0 (e.g. 10s, 5m)", option, text));
  }
  return *ns;
}

/// The suite file (or the built-in one), the scenarios chosen, and the time overrides.
Expected<suite::SuiteConfig> BuildConfig(const SuiteOptions& o, const std::vector<int>& online) {
  suite::SuiteConfig c;
  if (!o.config.empty()) {
    auto config = suite::LoadSuiteFile(o.config, online);
    if (!config) return config.error();
    c = std::move(*config);
  } else {
    c.source = "built-in";
    auto scenarios = suite::DefaultScenarios(online);
    if (!scenarios) return scenarios.error();
    c.scenarios = std::move(*scenarios);
  }
  if (!o.scenarios.empty()) {
    auto chosen = suite::SelectScenarios(c.scenarios, o.scenarios);
    if (!chosen) return chosen.error();
    c.scenarios = std::move(*chosen);
  }
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
    auto paths = measure::ParseWakeList(o.wake);
    if (!paths) return paths.error();
    c.wake = std::move(*paths);
  }
  return c;
}

Expected<std::vector<int>> MeasuredCpus(const SuiteOptions& o, const std::vector<int>& online) {
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

/// Everything checked and decided before anything is started or written.
Expected<Plan> BuildPlan(const SuiteOptions& o) {
  Plan plan;
  suite::SuitePlan& p = plan.suite;
  p.online = OnlineCpus(FsRoot::System());
  auto config = BuildConfig(o, p.online);
  if (!config) return config.error();
  p.config = std::move(*config);
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
                    *o.ab_pairs, suite::kAbMinPairs, suite::kAbDefaultPairs));
  }
  if (o.tune_ab && p.config.wake.size() != 1) {
    return UsageError(
        "--tune-ab compares one wake path per block: give --wake with one path (e.g. --wake "
        "abs)");
  }
  if (!o.budget.empty()) {
    auto budget = stats::ParseBudget(o.budget);
    if (!budget) return UsageError("--budget: " + budget.error().message);
    p.budget = *budget;
  }
  if (!o.textfile.empty()) {
    if (Status s = exporter::CheckTextfileDir(o.textfile); !s) return s.error();
    p.textfile_dir = o.textfile;
  }
  p.strict = o.strict;
  p.tune = o.tune;
  p.invocation = Invocation();
  p.version = kVersion;

  // The probes: one SCHED_FIFO thread per measured CPU, the same settings in every scenario.
  suite::LatencySettings& l = plan.latency;
  l.cpus = p.cpus;
  l.priority = p.config.priority;
  l.interval_ns = p.config.interval_ns;
  l.wake = p.config.wake;
  l.samples = o.samples;
  auto explain_events = ParseExplainEvents(o.explain_events, !o.explain.empty());
  if (!explain_events) return explain_events.error();
  if (!o.explain.empty()) {
    auto threshold = ParseExplainThresholdNs(o.explain);
    if (!threshold) return threshold.error();
    trace::ExplainPlan explain;
    explain.threshold_ns = *threshold;
    explain.session.cpus = l.cpus;
    explain.session.tracefs_dir = TracefsDirFromEnv();
    explain.session.events = *explain_events;
    l.explain = std::move(explain);
    l.verdict_line = ExplainVerdictLine;
  }
  if (o.wake.find("all") != std::string::npos) {
    measure::DropOnePerProcessPaths(l.wake, l.cpus.size(), l.notes);
  }
  auto latency = suite::SuiteLatencyPlan(l);
  if (!latency) return latency.error();
  plan.latency_plan = std::move(*latency);

  p.out_dir = o.out.empty() ? "rtpulse_" + RunFolderStamp() : o.out;
  if (Status s = CheckOutputFolder(p.out_dir); !s) return s.error();
  return plan;
}

/// The suite's progress lines: time, samples, max, p99 and missed per scenario.
class SuiteProgress final : public ScenarioProgress {
 public:
  using ScenarioProgress::ScenarioProgress;

 protected:
  std::string SettlingLine(int64_t left_ns) const override {
    return fmt::format("[{}/{}] {}: loads settling, {} left (not measured)   suite ETA {}",
                       index_ + 1, count_, name_, suite::FormatClock(left_ns),
                       suite::FormatClock(left_ns + planned_ns_ + after_ns_));
  }
  std::string MeasuringLine(const suite::LiveStatus& s) const override {
    const int64_t left = std::max<int64_t>(0, planned_ns_ - s.elapsed_ns);
    return fmt::format(
        "[{}/{}] {}: {} / {}  samples {}  max {}  p99 {}  missed {}   ETA {}  "
        "suite ETA {}",
        index_ + 1, count_, name_, suite::FormatClock(s.elapsed_ns),
        suite::FormatClock(planned_ns_), s.samples, results::HumanNs(static_cast<double>(s.max_ns)),
        results::HumanNs(static_cast<double>(s.p99_ns)), s.missed, suite::FormatClock(left),
        suite::FormatClock(left + after_ns_));
  }
};

/// --tune-ab: tries every knob once (applied, then restored at once) to learn which apply
/// here, then replaces the scenarios by the blocks of those that do.
Status PlanTuneAb(const SuiteOptions& o, const FsRoot& root, suite::SuitePlan& plan) {
  std::vector<suite::AbKnob> knobs;
  for (const sys::TuneKnob knob : sys::kTuneKnobs) {
    if (knob == sys::TuneKnob::kRtThrottling && !o.rt_throttling_off) {
      knobs.push_back(suite::KnobNotTried(
          knob,
          "RT throttling off lets a runaway real-time thread starve its CPU; add "
          "--no-rt-throttling to measure it"));
      continue;
    }
    auto applied = suite::ApplyKnob(root, knob, plan.cpus, plan.online, "");
    if (!applied) return applied.error();
    const nlohmann::json records = (*applied)->ToJson();
    if (Status restored = (*applied)->Restore(); !restored) return restored;
    knobs.push_back(suite::KnobFromRecords(knob, records));
  }
  plan.tune_ab = suite::ExpandTuneAb(plan.config, std::move(knobs),
                                     o.ab_pairs.value_or(suite::kAbDefaultPairs));
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

int RunSuite(const SuiteOptions& o) {
  auto built = BuildPlan(o);
  if (!built) return ReportError(built.error());
  Plan& plan = *built;
  if (o.list) {
    std::fputs(suite::FormatScenarioList(plan.suite).c_str(), stdout);
    if (o.tune_ab) {
      fmt::print("--tune-ab: {} pairs of off/on blocks of these scenarios per knob that applies\n",
                 o.ab_pairs.value_or(suite::kAbDefaultPairs));
    }
    return ToInt(ExitCode::kOk);
  }

  const sys::ProcessFacts process = sys::ProbeProcess();
  // Signals are taken synchronously from here on (sigtimedwait in the settle wait and in the
  // engine); load workers restore their own mask.
  measure::BlockRunSignals();

  const FsRoot& root = FsRoot::System();
  if (o.tune_ab) {
    if (Status s = PlanTuneAb(o, root, plan.suite); !s) return ReportError(s.error());
  }
  const SystemCommandRunner commands;
  const sys::CheckContext context(root, commands, process);
  suite::Preflight preflight =
      suite::RunPreflight(context, fmt::format("rtpulse {} suite, {}", kVersion, Invocation()));
  suite::LatencyWorkload workload(plan.latency_plan, plan.latency, context.info, kVersion,
                                  Invocation());
  SuiteProgress progress(StderrProgressMode(o.quiet));
  suite::SignalPause pause;

  suite::Services services =
      suite::MachineServices(plan.suite, root, std::move(preflight), pause, workload, progress);
  services.tune = [&](const std::string& journal) {
    return suite::ApplyTuning(root, plan.suite.cpus, plan.suite.online, o.rt_throttling_off,
                              journal);
  };
  services.tune_knob = [&](sys::TuneKnob knob, const std::string& journal) {
    return suite::ApplyKnob(root, knob, plan.suite.cpus, plan.suite.online, journal,
                            plan.suite.out_dir + "/result.json");
  };

  const suite::RunOutcome outcome = suite::RunSuite(plan.suite, services);
  if (outcome.result.scenarios.empty() || outcome.result.status == "refused" ||
      outcome.result.status == "running") {
    return ToInt(outcome.code);  // stopped before any scenario ran; the runner said why
  }
  std::fputs(results::FormatStatisticalSummary(outcome.result).c_str(), stdout);
  if (!outcome.result.tune_ab.is_null()) {
    std::fputs(("\n" + suite::FormatTuneAb(outcome.result.tune_ab)).c_str(), stdout);
  }
  const results::Verdict verdict = results::JudgeSuite(outcome.result, plan.suite.budget);
  if (const std::string text = results::FormatVerdict(verdict); !text.empty()) {
    std::fputs(("\n" + text).c_str(), stdout);
  }
  for (const auto& s : outcome.result.scenarios) {
    if (!s.latency || !s.latency->explain) continue;
    int64_t measured_ns = 0;
    for (const auto& path : s.latency->paths) measured_ns += path.duration_ns;
    fmt::print("\nscenario {}:\n{}", s.name, FormatExplainTable(*s.latency->explain, measured_ns));
  }
  for (const auto& w : outcome.result.warnings) fmt::print("warning: {}\n", w);
  fmt::print("results: {}\n", plan.suite.out_dir);
  std::fflush(stdout);
  if (outcome.code == ExitCode::kOk && plan.suite.budget && !verdict.Met()) {
    return ToInt(ExitCode::kBudgetNotMet);
  }
  return ToInt(outcome.code);
}

}  // namespace

Runner SetupSuite(CLI::App& sub) {
  auto o = std::make_shared<SuiteOptions>();
  sub.add_option("--config", o->config, "suite TOML file (docs/suite-config.md, examples/suites/)");
  sub.add_option("-D,--duration", o->duration,
                 "measured time per scenario, e.g. 600s, 10m (default 600s, or the config's)");
  sub.add_flag("--quick", o->quick, "about 10 s per scenario (2 s settle + 8 s measured)");
  sub.add_option("--settle", o->settle, "loads run this long before measuring (default 5s)");
  sub.add_option("--scenarios", o->scenarios, "run these scenarios, in this order: idle,heavy");
  sub.add_option("-o,--out", o->out, "results folder (default ./rtpulse_YYYYMMDD_HHMMSS)");
  sub.add_option("--cpus", o->cpus, "CPUs to measure on, e.g. 2-3 (default: every online CPU)");
  sub.add_option("-p,--priority", o->priority, "SCHED_FIFO priority of the probes (default 80)");
  sub.add_option("-i,--interval", o->interval, "probe period, e.g. 1000 (us) or 1ms (default 1ms)");
  sub.add_option("--wake", o->wake, "activation path(s), as in 'rtpulse latency --wake'");
  sub.add_option("--monitor-interval", o->monitor_interval, "monitor sampling period (default 5s)");
  sub.add_option("--checkpoint-interval", o->checkpoint_interval,
                 "result.json is rewritten this often while measuring (default 10s, at most 10s)");
  sub.add_flag("--tune", o->tune,
               "apply reversible tunings for the run (governor, min frequency, IRQs off the "
               "measured CPUs) and restore them on every exit (docs/tuning.md)");
  sub.add_flag("--no-rt-throttling", o->rt_throttling_off,
               "with --tune: also turn RT throttling off (sched_rt_runtime_us = -1); with "
               "--tune-ab: also measure that knob");
  sub.add_flag("--tune-ab", o->tune_ab,
               "measure each tuning's effect: every knob that applies here runs off and on in "
               "interleaved (ABBA) blocks of the scenarios; effect on p99.9 and max with an "
               "interval (docs/tuning.md)");
  sub.add_option("--ab-pairs", o->ab_pairs,
                 "with --tune-ab: off/on block pairs per knob (default 8; at least 6 for an "
                 "interval)");
  sub.add_flag("--strict", o->strict, "refuse to run (exit 1) when a pre-flight check fails");
  sub.add_flag("--samples", o->samples, "also log every sample to <scenario>/samples.bin");
  sub.add_option("--explain", o->explain,
                 "explain every sample later than US (e.g. 200 or 0.2ms) from a kernel trace: "
                 "a verdict line each, the causes in result.json, raw windows in "
                 "<scenario>/explain/ (docs/explain.md)");
  sub.add_option("--explain-events", o->explain_events,
                 "with --explain: lean (default: the events the attribution reads) or full "
                 "(every traced event, for the raw windows; costs more; docs/trace.md#events)");
  sub.add_flag("-q,--quiet", o->quiet, "no progress lines; only the final summary");
  sub.add_flag("--list", o->list, "print the scenarios that would run, then exit");
  sub.add_option("--budget", o->budget,
                 "judge every scenario: LATENCY[@PERCENTILE], e.g. 100us@p99.99 (without: the "
                 "max); exit 4 when not met (docs/budget.md)");
  sub.add_option("--textfile", o->textfile,
                 "also write DIR/rtpulse.prom (node_exporter's textfile collector) at every "
                 "checkpoint and at the end (docs/fleet.md)");
  sub.allow_extras(false);
  sub.footer(
      "Exit codes: 0 every scenario complete, 1 a scenario failed (or --strict refused),\n"
      "            2 bad usage or input (nothing run), 3 missing privilege or resource,\n"
      "            4 --budget not met (every scenario ran; the verdict says which failed),\n"
      "            130 interrupted (results for what ran are written and marked).\n"
      "Docs: docs/suite.md, docs/suite-config.md, docs/result-json.md.");
  return [o] { return RunSuite(*o); };
}

}  // namespace rtpulse::cli
