// rtpulse suite: parses the options into a typed plan and hands it to the scenario runner
// (src/suite/runner.h), which does the work; this file only draws its progress and prints the
// summary.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/latency_options.h"
#include "cli/live_view.h"
#include "cli/scenario_progress.h"
#include "core/exit_code.h"
#include "core/fs_root.h"
#include "core/version.h"
#include "results/budget_verdict.h"
#include "results/cyclictest_format.h"
#include "suite/latency_workload.h"
#include "suite/machine_run.h"
#include "suite/runner.h"
#include "suite/suite_plan.h"
#include "suite/tune_ab.h"
#include "sys/system_info.h"

namespace rtpulse::cli {
namespace {

/// The options as typed: the plan's request and what only the command uses.
struct SuiteOptions {
  suite::SuiteRequest request;
  std::string explain;         ///< --explain US
  std::string explain_events;  ///< --explain-events lean|full ("" = lean)
  bool quiet = false;
  bool list = false;
};

/// The request with --explain parsed, checked into a plan (suite/suite_plan.h).
Expected<suite::LatencySuitePlan> BuildPlan(SuiteOptions& o) {
  if (Status s = CompleteRequest(o.request, o.explain, o.explain_events); !s) return s.error();
  return suite::BuildLatencySuitePlan(o.request, FsRoot::System());
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

int RunSuite(SuiteOptions& o) {
  auto built = BuildPlan(o);
  if (!built) return ReportError(built.error());
  suite::LatencySuitePlan& plan = *built;
  const suite::SuiteRequest& r = o.request;
  if (o.list) {
    std::fputs(suite::FormatScenarioList(plan.suite).c_str(), stdout);
    if (r.tune_ab) {
      fmt::print("--tune-ab: {} pairs of off/on blocks of these scenarios per knob that applies\n",
                 r.ab_pairs.value_or(suite::kAbDefaultPairs));
    }
    return ToInt(ExitCode::kOk);
  }

  suite::MachineRun machine(FsRoot::System(),
                            fmt::format("rtpulse {} suite, {}", kVersion, Invocation()));
  const FsRoot& root = machine.root();
  if (r.tune_ab) {
    const int pairs = r.ab_pairs.value_or(suite::kAbDefaultPairs);
    if (Status s = suite::PlanTuneAb(root, r.rt_throttling_off, pairs, plan.suite); !s) {
      return ReportError(s.error());
    }
  }
  suite::LatencyWorkload workload(plan.latency_plan, plan.latency, machine.info(), kVersion,
                                  Invocation());
  SuiteProgress progress(StderrProgressMode(o.quiet));
  const suite::RunOutcome outcome =
      machine.Run(plan.suite, workload, progress, [&](suite::Services& services) {
        services.tune = [&](const std::string& journal) {
          return suite::ApplyTuning(root, plan.suite.cpus, plan.suite.online, r.rt_throttling_off,
                                    journal);
        };
        services.tune_knob = [&](sys::TuneKnob knob, const std::string& journal) {
          return suite::ApplyKnob(root, knob, plan.suite.cpus, plan.suite.online, journal,
                                  plan.suite.out_dir + "/result.json");
        };
      });
  if (suite::NothingRan(outcome)) return ToInt(outcome.code);  // the runner said why
  std::fputs(results::FormatStatisticalSummary(outcome.result).c_str(), stdout);
  if (!outcome.result.tune_ab.is_null()) {
    std::fputs(("\n" + suite::FormatTuneAb(outcome.result.tune_ab)).c_str(), stdout);
  }
  const results::Verdict verdict = results::JudgeSuite(outcome.result, plan.suite.budget);
  if (const std::string text = results::FormatVerdict(verdict); !text.empty()) {
    std::fputs(("\n" + text).c_str(), stdout);
  }
  PrintRunEnd(outcome, plan.suite.out_dir, stdout);
  if (outcome.code == ExitCode::kOk && plan.suite.budget && !verdict.Met()) {
    return ToInt(ExitCode::kBudgetNotMet);
  }
  return ToInt(outcome.code);
}

}  // namespace

Runner SetupSuite(CLI::App& sub) {
  auto o = std::make_shared<SuiteOptions>();
  sub.add_option("--config", o->request.config,
                 "suite TOML file (docs/suite-config.md, examples/suites/)");
  sub.add_option("-D,--duration", o->request.duration,
                 "measured time per scenario, e.g. 600s, 10m (default 600s, or the config's)");
  sub.add_flag("--quick", o->request.quick, "about 10 s per scenario (2 s settle + 8 s measured)");
  sub.add_option("--settle", o->request.settle,
                 "loads run this long before measuring (default 5s)");
  sub.add_option("--scenarios", o->request.scenarios,
                 "run these scenarios, in this order: idle,heavy");
  sub.add_option("-o,--out", o->request.out, "results folder (default ./rtpulse_YYYYMMDD_HHMMSS)");
  sub.add_option("--cpus", o->request.cpus,
                 "CPUs to measure on, e.g. 2-3 (default: every online CPU)");
  sub.add_option("-p,--priority", o->request.priority,
                 "SCHED_FIFO priority of the probes (default 80)");
  sub.add_option("-i,--interval", o->request.interval,
                 "probe period, e.g. 1000 (us) or 1ms (default 1ms)");
  sub.add_option("--wake", o->request.wake, "activation path(s), as in 'rtpulse latency --wake'");
  sub.add_option("--monitor-interval", o->request.monitor_interval,
                 "monitor sampling period (default 5s)");
  sub.add_option("--checkpoint-interval", o->request.checkpoint_interval,
                 "result.json is rewritten this often while measuring (default 10s, at most 10s)");
  sub.add_flag("--tune", o->request.tune,
               "apply reversible tunings for the run (governor, min frequency, IRQs off the "
               "measured CPUs) and restore them on every exit (docs/tuning.md)");
  sub.add_flag("--no-rt-throttling", o->request.rt_throttling_off,
               "with --tune: also turn RT throttling off (sched_rt_runtime_us = -1); with "
               "--tune-ab: also measure that knob");
  sub.add_flag("--tune-ab", o->request.tune_ab,
               "measure each tuning's effect: every knob that applies here runs off and on in "
               "interleaved (ABBA) blocks of the scenarios; effect on p99.9 and max with an "
               "interval (docs/tuning.md)");
  sub.add_option("--ab-pairs", o->request.ab_pairs,
                 "with --tune-ab: off/on block pairs per knob (default 8; at least 6 for an "
                 "interval)");
  sub.add_flag("--strict", o->request.strict,
               "refuse to run (exit 1) when a pre-flight check fails");
  sub.add_flag("--samples", o->request.samples, "also log every sample to <scenario>/samples.bin");
  sub.add_option("--explain", o->explain,
                 "explain every sample later than US (e.g. 200 or 0.2ms) from a kernel trace: "
                 "a verdict line each, the causes in result.json, raw windows in "
                 "<scenario>/explain/ (docs/explain.md)");
  sub.add_option("--explain-events", o->explain_events,
                 "with --explain: lean (default: the events the attribution reads) or full "
                 "(every traced event, for the raw windows; costs more; docs/trace.md#events)");
  sub.add_flag("-q,--quiet", o->quiet, "no progress lines; only the final summary");
  sub.add_flag("--list", o->list, "print the scenarios that would run, then exit");
  sub.add_option("--budget", o->request.budget,
                 "judge every scenario: LATENCY[@PERCENTILE], e.g. 100us@p99.99 (without: the "
                 "max); exit 4 when not met (docs/budget.md)");
  sub.add_option("--textfile", o->request.textfile,
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
