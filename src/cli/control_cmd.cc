// rtpulse control: the periodic flight-control job under scheduling configurations and loads
// (docs/control.md). Options become a suite plan (suite/control_plan.h, where every check
// lives) whose scenarios are the configurations and a suite::ControlWorkload; the suite
// runner runs them. --interference runs the contention experiment (suite/interference.h)
// instead. This file parses, runs the plan and prints.
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
#include "control/control_loop.h"
#include "control/flight_controller.h"
#include "core/atomic_file.h"
#include "core/exit_code.h"
#include "core/file_owner.h"
#include "core/fs_root.h"
#include "core/version.h"
#include "measure/engine.h"
#include "report/control_figures.h"
#include "results/control_result.h"
#include "results/control_summary.h"
#include "results/cyclictest_format.h"
#include "stats/control_cost.h"
#include "suite/control_plan.h"
#include "suite/control_workload.h"
#include "suite/interference.h"
#include "suite/machine_run.h"
#include "suite/runner.h"
#include "sys/system_info.h"

namespace rtpulse::cli {
namespace {

/// The options as typed: the plan's request and what only the command uses.
struct ControlOptions {
  suite::ControlRequest request;
  std::string json;
  bool quiet = false;
  std::string explain;         ///< --explain US
  std::string explain_events;  ///< --explain-events lean|full ("" = lean)
};

/// The request with --explain parsed, checked into a plan; --exec calibrated last, before any
/// load starts, on the job's CPU: every configuration runs the same work.
Expected<suite::ControlPlan> BuildControlPlan(ControlOptions& o) {
  if (Status s = CompleteRequest(o.request, o.explain, o.explain_events); !s) return s.error();
  auto plan = suite::BuildControlPlan(o.request, FsRoot::System());
  if (!plan) return plan.error();
  if (!o.json.empty() && o.json != "-") {
    if (Status s = CheckWritable(o.json); !s)
      return Error{s.error().code, "--json: " + s.error().message};
  }
  if (plan->settings.exec_ns > 0) {
    auto calibration = suite::CalibrateOnCpu(plan->settings);
    if (!calibration) return calibration.error();
    plan->settings.calibration = *calibration;
  }
  return plan;
}

/// The control command's progress lines: jobs, max response and deadline misses.
class ControlProgress final : public ScenarioProgress {
 public:
  using ScenarioProgress::ScenarioProgress;

 protected:
  std::string SettlingLine(int64_t left_ns) const override {
    return fmt::format("[{}/{}] {}: loads settling, {} left", index_ + 1, count_, name_,
                       suite::FormatClock(left_ns));
  }
  std::string MeasuringLine(const suite::LiveStatus& s) const override {
    const int64_t left = std::max<int64_t>(0, planned_ns_ - s.elapsed_ns);
    return fmt::format(
        "[{}/{}] {}: jobs {}  max response {}  deadline misses {}   ETA {}  run ETA {}", index_ + 1,
        count_, name_, s.samples, results::HumanNs(static_cast<double>(s.max_ns)), s.missed,
        suite::FormatClock(left), suite::FormatClock(left + after_ns_));
  }
};

/// The run summary (suite::ControlSummaryOf), printed as the summary table and the control
/// cost of each configuration.
results::ControlSummary PrintControlSummary(const suite::ControlWorkload& workload,
                                            std::FILE* text) {
  results::ControlSummary summary = suite::ControlSummaryOf(workload);
  std::vector<results::ControlSummaryRow> rows;
  for (const auto& c : summary.configurations) rows.push_back(c.row);
  std::fputs(results::FormatControlSummary(rows).c_str(), text);
  fmt::print(text,
             "\nControl cost under the measured timing (docs/control.md, \"Control cost\"):\n{}",
             stats::DescribeReplaySettings(stats::ReplaySettings{}));
  for (const auto& c : summary.configurations) {
    fmt::print(text, "  {}: {}\n", c.row.scenario,
               c.cost ? c.cost->summary : "not computed: " + c.cost_error);
  }
  return summary;
}

/// The response-time CDF and box plot of every configuration into RUN/figures; a figure
/// that cannot be drawn (gnuplot missing) is a warning, not a failed run.
void WriteFigures(const std::string& run_dir, const suite::ControlWorkload& workload,
                  results::ControlSummary& summary, std::FILE* text) {
  std::vector<report::ControlFigureInput> inputs;
  for (const auto& o : workload.outcomes()) {
    inputs.push_back({o.scenario, o.policy_path, o.loaded, o.rows});
  }
  std::vector<std::string> notes;
  if (Status s = report::WriteControlFigures(run_dir, inputs, {}, &notes); !s) {
    notes.push_back("figures not written: " + s.error().message);
  }
  for (const auto& n : notes) fmt::print(text, "note: {}\n", n);
  summary.figure_notes = notes;
}

int RunInterferenceMode(const ControlOptions& o, suite::ControlPlan& plan) {
  const suite::InterferencePlan& ip = *plan.interference;
  if (Status s = CreateFolders(plan.suite.out_dir); !s) return ReportError(s.error());
  measure::BlockRunSignals();
  std::atomic<bool> stop{false};
  const suite::RunCondition run =
      suite::MakeInterferenceRunner(ip, plan.settings, stop, plan.suite.out_dir);
  if (!o.quiet) {
    fmt::print(stderr,
               "rtpulse: interference: {} conditions x {} repetitions x {} jobs on CPU {}, work "
               "set {} KiB (last-level cache {} KiB)\n",
               ip.conditions.size(), ip.repetitions, ip.jobs_per_run, ip.cpu,
               ip.work_set_bytes / 1024, ip.llc_bytes / 1024);
  }
  auto report = suite::RunInterference(ip, run, stop);
  if (!report) return ReportError(report.error());
  std::FILE* out = o.json == "-" ? stderr : stdout;
  const std::string text = suite::FormatInterference(*report);
  std::fputs(text.c_str(), out);
  nlohmann::json doc = suite::InterferenceToJson(*report);
  doc["rtpulse_version"] = kVersion;
  doc["cmdline"] = Invocation();
  if (plan.settings.calibration) {
    doc["calibration"] = {{"target_ns", plan.settings.exec_ns},
                          {"extra_passes", plan.settings.calibration->passes},
                          {"measured_ns", plan.settings.calibration->measured_ns}};
  }
  int code = report->interrupted ? ToInt(ExitCode::kInterrupted) : ToInt(ExitCode::kOk);
  for (const auto& [file, content] :
       {std::pair{std::string("interference.txt"), text},
        std::pair{std::string("interference.json"), doc.dump(2) + "\n"}}) {
    if (Status s = WriteFileAtomic(plan.suite.out_dir + "/" + file, content); !s) {
      ReportError(s.error());
      code = ToInt(ExitCode::kFailure);
    }
  }
  if (Status s = WriteOutput(o.json, doc.dump(2) + "\n"); !s) {
    ReportError(s.error());
    code = ToInt(ExitCode::kFailure);
  }
  fmt::print(out, "results: {}\n", plan.suite.out_dir);
  return code;
}

int RunControl(ControlOptions& o) {
  auto built = BuildControlPlan(o);
  if (!built) return ReportError(built.error());
  suite::ControlPlan& plan = *built;
  if (plan.interference) return RunInterferenceMode(o, plan);

  suite::MachineRun machine(FsRoot::System(),
                            fmt::format("rtpulse {} control, {}", kVersion, Invocation()));
  suite::ControlWorkload workload(plan.settings, machine.info(), kVersion, Invocation());
  ControlProgress progress(StderrProgressMode(o.quiet));
  const suite::RunOutcome outcome = machine.Run(plan.suite, workload, progress);
  if (suite::NothingRan(outcome)) return ToInt(outcome.code);  // the runner said why
  // --json -: the JSON document alone goes to stdout; the text goes to stderr.
  std::FILE* text = o.json == "-" ? stderr : stdout;
  results::ControlSummary summary = PrintControlSummary(workload, text);
  WriteFigures(plan.suite.out_dir, workload, summary, text);
  summary.results = plan.suite.out_dir;
  summary.status = outcome.result.status;
  int code = ToInt(outcome.code);
  if (Status s = WriteOutput(o.json, results::ToJson(summary).dump(2) + "\n"); !s) {
    ReportError(s.error());
    if (code == 0) code = ToInt(ExitCode::kFailure);
  }
  PrintRunEnd(outcome, plan.suite.out_dir, text);
  return code;
}

}  // namespace

Runner SetupControl(CLI::App& sub) {
  auto o = std::make_shared<ControlOptions>();
  sub.add_option("--policy", o->request.policy,
                 "other:NICE, fifo:PRIO, rr:PRIO or deadline:RUNTIME/DEADLINE/PERIOD (default "
                 "fifo:99)");
  sub.add_option("--period", o->request.period, "control period (default 4ms: 250 Hz)");
  auto* jobs = sub.add_option("--jobs", o->request.jobs, "jobs per configuration (default 10000)");
  sub.add_option("--deadline", o->request.deadline,
                 "a job misses when it ends later than this after its "
                 "release (default: the period)");
  sub.add_option("--cpu", o->request.cpu, "the job's CPU (default: the last online CPU)");
  sub.add_option("--wake", o->request.wake,
                 "activation path, as in 'rtpulse latency --wake' (default abs; timerfd, posix, "
                 "...)");
  sub.add_option("--work-set", o->request.work_set,
                 "memory the job touches every period, e.g. 4M (default none)");
  sub.add_option("--work-set-mode", o->request.work_set_mode, "streaming (default) or random");
  sub.add_option("--exec", o->request.exec,
                 "calibrate the job to this execution time here, e.g. 400 (us) or 400us (holds at "
                 "the CPU frequency of the calibration)");
  sub.add_option("--sweep", o->request.sweep,
                 "paper: the study's 8 configurations x {no stress, stress}; paths: --policy on "
                 "abs, timerfd and posix");
  sub.add_option("--load", o->request.load,
                 "load SPEC for the stressed configurations, replacing the study's stress-ng mix "
                 "(docs/loads.md); repeatable");
  sub.add_flag("--no-stress", o->request.no_stress, "only the configurations without load");
  sub.add_option("--settle", o->request.settle,
                 "loads run this long before the jobs (default 1s with loads, 0 without)");
  sub.add_flag("--interference", o->request.interference,
               "memory-contention experiment: the job isolated, with a CPU load and a memory load "
               "on the other CPUs, and with a load on its own CPU");
  sub.add_option("--repetitions", o->request.repetitions,
                 "with --interference: interleaved repetitions per condition (default 5)");
  sub.add_option("-o,--out", o->request.out,
                 "results folder (default ./rtpulse_control_YYYYMMDD_HHMMSS)");
  sub.add_option("--json", o->json, "also write the summary as JSON to this file ('-': stdout)");
  sub.add_option("--explain", o->explain,
                 "explain every job whose start - release exceeds US (e.g. 200 or 0.2ms) from a "
                 "kernel trace: a verdict line each, the causes in result.json, raw windows in "
                 "<scenario>/explain/ (docs/control.md)");
  sub.add_option("--explain-events", o->explain_events,
                 "with --explain: lean (default: the events the attribution reads) or full "
                 "(every traced event, for the raw windows; costs more; docs/trace.md#events)");
  sub.add_flag("-q,--quiet", o->quiet, "no progress lines; only the final summary");
  sub.add_option("--checkpoint", o->request.checkpoint,
                 "result.json is rewritten this often while measuring (default 10s, at most 10s)");
  sub.add_option("--inject-exec", o->request.inject_exec,
                 "test aid: EVERY:EXTRA, every EVERYth job runs EXTRA longer (e.g. 50:6ms), known "
                 "ground truth for misses and skipped releases");
  sub.allow_extras(false);
  sub.footer(
      "Exit codes: 0 every configuration complete, 1 a configuration failed,\n"
      "            2 bad usage or input (nothing run, nothing written), 3 missing privilege or\n"
      "            resource, 130 interrupted (results for what ran are written and marked).\n"
      "Docs: docs/control.md, docs/suite.md, docs/loads.md.");
  return [o, jobs] {
    o->request.jobs_given = jobs->count() > 0;
    return RunControl(*o);
  };
}

}  // namespace rtpulse::cli
