#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/explain_text.h"
#include "cli/latency_options.h"
#include "cli/live_view.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/fs_root.h"
#include "core/version.h"
#include "export/textfile.h"
#include "measure/engine.h"
#include "measure/gpio.h"
#include "measure/rt_setup.h"
#include "measure/sample_log.h"
#include "measure/wake_clock.h"
#include "results/budget_verdict.h"
#include "results/cyclictest_format.h"
#include "results/log_percentiles.h"
#include "stats/budget.h"
#include "stats/summary.h"
#include "suite/explain_record.h"
#include "suite/explain_sink.h"
#include "suite/facts.h"
#include "suite/latency_record.h"
#include "suite/textfile_observer.h"
#include "suite/timerlat_record.h"
#include "sys/stats_outlets.h"
#include "sys/system_info.h"
#include "sys/tuning.h"

namespace rtpulse::cli {
namespace {

int64_t MeasuredNs(const results::LatencyRun& run) {
  int64_t ns = 0;
  for (const auto& path : run.paths) ns += path.duration_ns;
  return ns;
}

/// Everything checked and decided before anything runs or is written.
struct LatencyCommandPlan {
  measure::LatencyPlan plan;
  std::optional<trace::TimerlatPlan> timerlat;  ///< --wake timerlat, after the other paths.
  bool run_wake_paths = true;                   ///< false: --wake timerlat alone.
  std::optional<trace::ExplainPlan> explain;
  std::optional<stats::Budget> budget;
};

Expected<LatencyCommandPlan> PrepareLatency(const LatencyOptions& o,
                                            const std::vector<int>& online) {
  LatencyCommandPlan out;
  // --wake timerlat runs after the list's other paths (alone: the plan still gives the
  // threads' CPUs, interval and priority).
  const suite::TimerlatWake wake = suite::SplitTimerlatWake(o.wake);
  LatencyOptions measured_options = o;
  if (wake.timerlat) measured_options.wake = wake.others.empty() ? "abs" : wake.others;
  auto plan = BuildLatencyPlan(measured_options, online);
  if (!plan) return plan.error();
  out.plan = std::move(*plan);
  out.plan.root = FsRoot::System();
  if (wake.timerlat && out.plan.wake_clock != CLOCK_MONOTONIC) {
    return UsageError(fmt::format(
        "-c {}: the timerlat tracer's timers are the kernel's, on CLOCK_MONOTONIC: drop -c, or "
        "measure timerlat in a run of its own",
        o.clock));
  }
  if (wake.timerlat && (o.aligned_us || o.secaligned_given)) {
    return UsageError(
        "-A/--secaligned set where rtpulse's threads start their grids; the timerlat tracer "
        "arms its own timers: drop them, or measure timerlat in a run of its own");
  }
  if (wake.timerlat) {
    // The tracer has one period, -i, for every CPU: cyclictest's thread distance (-d, 500 us
    // by default) spaces only the other paths' threads.
    if (wake.others.empty() && o.distance_us && *o.distance_us != 0) {
      return UsageError(fmt::format(
          "-d {}: --wake timerlat has one period (-i) for every CPU, so a thread distance "
          "does not apply: drop -d",
          *o.distance_us));
    }
    LatencyOptions timerlat_options = measured_options;
    timerlat_options.distance_us = 0;
    auto timerlat_threads = BuildLatencyPlan(timerlat_options, online);
    if (!timerlat_threads) return timerlat_threads.error();
    auto t = suite::BuildTimerlatPlan(*timerlat_threads, online);
    if (!t) return t.error();
    out.timerlat = std::move(*t);
  }
  out.run_wake_paths = !wake.timerlat || !wake.others.empty();
  auto explain = BuildExplainPlan(o, out.plan, online);
  if (!explain) return explain.error();
  out.explain = std::move(*explain);
  // --wake gpio: the lines are looked up (chip, line, in use) before anything runs or is
  // written; the probe requests them when it arms.
  for (const std::string* line : {&out.plan.gpio_wake, &out.plan.gpio_drive}) {
    if (line->empty()) continue;
    auto spec = measure::ParseGpioLine(*line);
    if (!spec) return spec.error();
    auto info = measure::ResolveGpioLine(*spec);
    if (!info) return info.error();
    if (info->used) return measure::GpioLineInUse(*spec, *info);
  }
  if (!o.budget.empty()) {
    auto parsed = stats::ParseBudget(o.budget);
    if (!parsed) return UsageError("--budget: " + parsed.error().message);
    out.budget = *parsed;
  }
  return out;
}

/// The wake paths, then timerlat, into `record`; the explainer (when there is one) also gets
/// timerlat's samples.
Status Measure(LatencyCommandPlan& p, measure::RunObserver* observer,
               std::unique_ptr<measure::SampleSink> sink, trace::Explainer* explainer,
               measure::RunRecord& record) {
  Status ran = Status::Ok();
  if (p.run_wake_paths) {
    auto measured = measure::RunLatency(p.plan, observer, std::move(sink));
    if (measured) {
      record = std::move(*measured);
    } else {
      ran = measured.error();
    }
  }
  if (ran && p.timerlat && !record.interrupted) {
    if (explainer != nullptr) suite::FeedTimerlatToExplainer(explainer, *p.timerlat);
    ran = suite::RunTimerlatInto(*p.timerlat, record);
  }
  return ran;
}

/// The JSON document, --textfile's last write and --json; returns the exit code so far.
int WriteRunFiles(const LatencyOptions& o, results::LatencyRun& run,
                  const results::Verdict& verdict, bool budget_not_met, int64_t start_realtime_ns,
                  int exit_code) {
  nlohmann::json document = results::ToJson(run, o.nsecs);
  document["verdict"] = results::VerdictJson(verdict);
  if (budget_not_met) document["return_code"] = ToInt(ExitCode::kBudgetNotMet);
  if (!o.textfile.empty()) {
    if (run.start_realtime_ns == 0) run.start_realtime_ns = start_realtime_ns;
    if (Status s = exporter::WriteLatencyRunTextfile(o.textfile, run); !s) {
      exit_code = ReportError(s.error());
    }
  }
  if (Status s = WriteOutput(o.json, document.dump(2) + "\n"); !s) {
    exit_code = ReportError(s.error());
  }
  return exit_code;
}

/// cyclictest's outputs: the histogram (to --histfile or `text`), the final status lines,
/// the injection lines, the breaktrace lines; then rtpulse's summary (not with -q), commented
/// out in script mode so cyclictest-style parsers skip it. Returns the exit code so far.
int PrintRunText(const LatencyOptions& o, const measure::LatencyPlan& plan,
                 const results::LatencyRun& run, const results::Verdict& verdict, std::FILE* text,
                 int exit_code) {
  std::string histogram;
  if (plan.linear_histogram_us > 0) {
    for (const auto& path : run.paths) {
      if (run.paths.size() > 1) histogram += fmt::format("# wake path: {}\n", path.wake);
      histogram += results::FormatHistogramBlock(path, o.histofall_us.has_value(), o.nsecs);
    }
  }
  if (!o.histfile.empty()) {
    if (Status s = WriteFileAtomic(o.histfile, histogram); !s) exit_code = ReportError(s.error());
  } else {
    std::fputs(histogram.c_str(), text);
  }
  if (plan.linear_histogram_us == 0 && !o.verbose) {
    for (const auto& path : run.paths) {
      if (run.paths.size() > 1) fmt::print(text, "# wake path: {}\n", path.wake);
      for (size_t i = 0; i < path.probes.size(); ++i) {
        fmt::print(text, "{}\n",
                   results::FinalStatusLine(path.probes[i], o.nsecs, results::ExactP99(path, i)));
      }
    }
  }
  if (run.inject) {
    for (const auto& path : run.paths) {
      for (const auto& p : path.probes) {
        fmt::print(text, "{}{}\n", results::FormatInjectionLine(p, *run.inject),
                   run.paths.size() > 1 ? " (" + path.wake + ")" : "");
      }
    }
  }
  if (run.breaktrace) {
    // cyclictest's lines, so scripts that look for them find them.
    fmt::print(text, "# Break thread: {}\n# Break value: {}\n", run.breaktrace->thread,
               o.nsecs ? run.breaktrace->latency_ns : run.breaktrace->latency_ns / 1000);
  }
  // -q, as cyclictest's: its lines alone, then only what was asked for by name (--explain's
  // table, --budget's verdict), commented. rtpulse's summary table is in the JSON and in the
  // output without -q; the warnings were printed once, on stderr.
  std::string summary;
  if (run.explain) summary += FormatExplainTable(*run.explain, MeasuredNs(run)) + "\n";
  if (!o.quiet) summary += results::FormatSummary(run);
  if (!o.quiet || verdict.budget) summary += results::FormatVerdict(verdict);
  const bool script_mode = o.quiet || o.verbose || plan.linear_histogram_us > 0;
  std::fputs(script_mode ? results::CommentedLines(summary).c_str() : ("\n" + summary).c_str(),
             text);
  return exit_code;
}

/// --dbg_cyclictest: each thread as it will run, on standard error.
void PrintThreadSetup(const measure::LatencyPlan& plan) {
  fmt::print(stderr, "# rtpulse: {} thread(s), wake path(s):", plan.threads.size());
  for (auto path : plan.paths) fmt::print(stderr, " {}", measure::WakePathName(path));
  fmt::print(stderr, ", clock {}\n", measure::WakeClockName(plan.wake_clock));
  for (const auto& t : plan.threads) {
    fmt::print(
        stderr, "# rtpulse: thread {}: CPU {}, {} priority {}, interval {} us, offset {} us\n",
        t.index, t.cpu < 0 ? std::string("any") : std::to_string(t.cpu), SchedPolicyName(t.policy),
        t.priority, t.interval_ns / kNsPerUs, t.phase_ns / kNsPerUs);
  }
}

/// -R: the clock's resolution as the kernel reports it and as measured, on standard error; a
/// coarse one is a warning recorded with the run.
void CheckClockResolution(clockid_t clock, std::vector<std::string>& warnings) {
  const measure::ClockResolution r = measure::MeasureClockResolution(clock);
  const std::string name = measure::WakeClockName(clock);
  fmt::print(stderr,
             "# rtpulse: {} clock: reported resolution {} ns, measured about {} ns over {} "
             "consecutive reads (a read's own cost included)\n",
             name, r.reported_ns, r.measured_ns, r.reads);
  if (auto warning = measure::ClockResolutionWarning(r, name)) warnings.push_back(*warning);
}

int RunLatencyCommand(const LatencyOptions& o, const std::string& cmdline) {
  // -u, as cyclictest: every line reaches a pipe as it is printed.
  if (o.unbuffered) std::setvbuf(stdout, nullptr, _IONBF, 0);
  // Before any thread: the writer's and the explainer's stacks, all locked, stay small.
  measure::SetDefaultThreadStack(measure::kHelperThreadStackBytes);
  const sys::SystemInfo probe = sys::ProbeSystem(FsRoot::System());
  auto prepared = PrepareLatency(o, probe.online_cpus);
  if (!prepared) return ReportError(prepared.error());
  LatencyCommandPlan& p = *prepared;
  // As cyclictest: a refused real-time set-up stops before anything is measured or written.
  if (!o.allow_degraded && p.run_wake_paths) {
    if (Status s = measure::CheckRealtimeSetup(p.plan); !s) return ReportError(s.error());
  }
  if (o.debug) PrintThreadSetup(p.plan);
  std::vector<std::string> environment = sys::EnvironmentWarnings(probe);
  if (o.resolution) CheckClockResolution(p.plan.wake_clock, environment);
  auto sink = measure::OpenSampleSink(o.samples, o.verbose, o.oscope.value_or(1));
  if (!sink) return ReportError(sink.error());
  std::optional<sys::StatsFifo> fifo;
  if (!o.fifo.empty()) {
    auto made = sys::StatsFifo::Create(o.fifo);
    if (!made) return ReportError(made.error());
    fifo.emplace(std::move(*made));
  }
  // As cyclictest, always: rt-tests' get_cyclictest_snapshot finds running instances by it.
  sys::SharedStats shared_stats;
  if (!shared_stats.warning().empty()) environment.push_back(shared_stats.warning());
  auto idle_states = sys::LimitIdleStates(FsRoot::System(), o.deepest_idle_state, probe.online_cpus,
                                          measure::MeasuredCpus(p.plan.threads, probe.online_cpus));
  if (!idle_states) return ReportError(idle_states.error());

  std::vector<std::string> names;
  for (auto path : p.plan.paths) names.emplace_back(measure::WakePathName(path));
  // --json -: the JSON document alone goes to stdout; the text outputs go to stderr.
  const bool json_stdout = o.json == "-";
  std::FILE* text = json_stdout ? stderr : stdout;
  LiveView view(ChooseLiveMode(o.quiet || json_stdout, o.verbose), stdout, o.nsecs,
                p.plan.duration_ns, p.plan.loops, names);
  if (o.refresh_on_max) view.RefreshOnMax();
  view.ShareStats(&shared_stats);
  if (fifo) view.ServeFifo(&*fifo);
  for (const auto& w : environment) fmt::print(stderr, "rtpulse: warning: {}\n", w);

  measure::BlockRunSignals();
  // After BlockRunSignals: the explainer's threads inherit the mask, so SIGINT still reaches
  // the engine's synchronous wait and not a trace thread.
  std::unique_ptr<trace::Explainer> explainer;
  const bool explain_only_ring = p.explain && !*sink;
  if (p.explain) {
    const bool quiet = o.quiet;
    explainer = trace::Explainer::Start(
        *p.explain, [&view, quiet](const trace::Explanation& e, const std::string& verdict) {
          if (!quiet) view.Note(stderr, ExplainVerdictLine(e, verdict));
        });
    *sink = std::make_unique<suite::ExplainSink>(explainer.get(), std::move(*sink));
  }
  const int64_t start_realtime_ns = ClockNs(CLOCK_REALTIME);
  std::optional<suite::TextfileObserver> textfile;
  if (!o.textfile.empty()) {
    results::LatencyRun facts;
    facts.rtpulse_version = kVersion;
    facts.start_realtime_ns = start_realtime_ns;
    suite::FillSystem(probe, facts);
    facts.inject = suite::InjectSettingsOf(p.plan);
    textfile.emplace(view, o.textfile, std::move(facts));
  }
  measure::RunObserver* observer =
      textfile ? static_cast<measure::RunObserver*>(&*textfile) : &view;
  measure::RunRecord record;
  const Status ran = Measure(p, observer, std::move(*sink), explainer.get(), record);
  std::optional<trace::ExplainSummary> explained;
  if (explainer) explained = explainer->Finish();  // the instance goes, whatever happened
  std::string idle_states_record;
  std::vector<std::string> idle_warnings;
  if (*idle_states) idle_states_record = sys::RestoreIdleStates(**idle_states, idle_warnings);
  if (!ran) {
    if (textfile) textfile->Failed();
    return ReportError(ran.error());
  }
  results::LatencyRun run =
      suite::CompleteLatencyRun(std::move(record), p.plan, probe,
                                {kVersion, cmdline, environment, explain_only_ring, o.samples});
  if (explained) {
    suite::AddExplainToRun(*explained, *p.explain, o.explain_cost_given, o.duration, run);
  }
  for (size_t i = environment.size(); i < run.warnings.size(); ++i) {
    fmt::print(stderr, "rtpulse: warning: {}\n", run.warnings[i]);
  }
  run.idle_states = std::move(idle_states_record);
  for (auto& w : idle_warnings) {
    fmt::print(stderr, "rtpulse: warning: {}\n", w);
    run.warnings.push_back(std::move(w));
  }

  int exit_code = ToInt(ExitCode::kOk);
  if (!run.samples_error.empty()) exit_code = ToInt(run.samples_error_code);
  const results::Verdict verdict = results::JudgeLatencyRun(run, p.budget);
  // An interrupted run is judged and printed, but its verdict does not set the exit code.
  const bool budget_not_met =
      exit_code == ToInt(ExitCode::kOk) && !run.interrupted && p.budget && !verdict.Met();
  exit_code = WriteRunFiles(o, run, verdict, budget_not_met, start_realtime_ns, exit_code);
  exit_code = PrintRunText(o, p.plan, run, verdict, text, exit_code);
  std::fflush(stdout);
  // A budget not met is exit 4 only when nothing else went wrong (a failed write says 1).
  if (budget_not_met && exit_code == ToInt(ExitCode::kOk)) {
    return ToInt(ExitCode::kBudgetNotMet);
  }
  return exit_code;
}

}  // namespace

Runner SetupLatency(CLI::App& sub) {
  auto options = std::make_shared<LatencyOptions>();
  DeclareLatencyOptions(sub, *options);
  sub.allow_extras(false);
  CLI::App* app = &sub;
  return [options, app] {
    NoteGivenOptions(*app, *options);
    if (app->count("--wake") > 0 && options->wake.empty()) {
      return ReportError(UsageError("--wake is empty: give e.g. --wake abs,timerfd"));
    }
    return RunLatencyCommand(*options, Invocation());
  };
}

}  // namespace rtpulse::cli
