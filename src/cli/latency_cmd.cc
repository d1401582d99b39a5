#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "cli/command.h"
#include "cli/explain_text.h"
#include "cli/latency_options.h"
#include "cli/latency_timerlat.h"
#include "cli/live_view.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/fs_root.h"
#include "core/version.h"
#include "export/textfile.h"
#include "measure/engine.h"
#include "measure/gpio.h"
#include "measure/sample_log.h"
#include "results/budget_verdict.h"
#include "results/cyclictest_format.h"
#include "stats/budget.h"
#include "stats/summary.h"
#include "suite/explain_record.h"
#include "suite/explain_sink.h"
#include "suite/facts.h"
#include "suite/latency_record.h"
#include "sys/system_info.h"

namespace rtpulse::cli {
namespace {

/// Prefixes every line with "# " so cyclictest-style parsers skip rtpulse's table.
std::string Commented(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? end : end - start);
    out += line.empty() ? "#\n" : "# " + line + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

/// With --explain and no --samples/-v the rings exist for the explainer alone: nothing was
/// logged, so the result must not say so (samples_logged 0; a full ring is named for what it
/// cost, spikes the explainer never saw).
void NoSamplesLogClaimed(results::LatencyRun& run) {
  for (auto& path : run.paths) {
    for (auto& p : path.probes) p.samples_logged = 0;
  }
  const std::string logged = "samples not logged (ring full: the writer or the disk fell behind)";
  for (auto& w : run.warnings) {
    if (const size_t at = w.find(logged); at != std::string::npos) {
      w.replace(at, logged.size(),
                "samples not seen by --explain (ring full: the explainer fell behind)");
    }
  }
}

/// The --explain outcome in the run: the JSON object, the warning when there was no trace,
/// the note for a cost phase the run was too short for.
void AddExplainToRun(const trace::ExplainSummary& summary, const LatencyOptions& o,
                     const trace::ExplainPlan& explain_plan, results::LatencyRun& run) {
  results::ExplainResult result = suite::ToExplainResult(summary, "");
  if (explain_plan.cost_phase_ns == 0 && !o.explain_cost_given && summary.active) {
    result.notes.push_back(fmt::format(
        "trace cost not measured: -D {} is shorter than twice the default 2 s cost phase (give "
        "a longer -D, or --explain-cost)",
        o.duration));
  }
  if (summary.active && explain_plan.window_dir.empty()) {
    result.notes.push_back("raw trace windows not saved (give --explain-windows DIR to keep them)");
  }
  if (!summary.active) {
    run.warnings.push_back(fmt::format("--explain: {}; the run goes on without attribution",
                                       summary.unavailable_reason));
  }
  run.explain = std::move(result);
}

/// --textfile: the live view's observer plus rtpulse.prom rewritten from every checkpoint
/// (each wake path's latest snapshot), so a long run is visible to node_exporter before it
/// ends and a killed one leaves its last checkpoint.
class TextfileObserver final : public measure::RunObserver {
 public:
  static constexpr int64_t kIntervalNs = 10 * kNsPerSec;

  TextfileObserver(measure::RunObserver& inner, std::string dir, results::LatencyRun facts)
      : inner_(inner), dir_(std::move(dir)), run_(std::move(facts)) {}
  void OnPathStart(size_t path_index, measure::WakePath path) override {
    inner_.OnPathStart(path_index, path);
  }
  bool WantsTicks() const override { return inner_.WantsTicks(); }
  void OnTick(const std::vector<measure::LiveProbe>& probes, int64_t elapsed_ns) override {
    inner_.OnTick(probes, elapsed_ns);
  }
  void OnStatsRequest(const std::vector<measure::LiveProbe>& probes) override {
    inner_.OnStatsRequest(probes);
  }
  int64_t CheckpointIntervalNs() const override { return kIntervalNs; }
  void OnCheckpoint(size_t path_index, const measure::PathRecord& snapshot) override {
    if (run_.paths.size() <= path_index) run_.paths.resize(path_index + 1);
    run_.paths[path_index] = suite::ToPathRun(snapshot);  // a copy: the engine reuses it
    Write("running");
  }
  /// A run that failed: the last checkpoint's figures, marked failed (not left "running").
  void Failed() { Write("failed"); }

 private:
  void Write(const char* status) {
    const double now = static_cast<double>(ClockNs(CLOCK_REALTIME)) / 1e9;
    const exporter::RunInfo info{"latency", status,
                                 static_cast<double>(run_.start_realtime_ns) / 1e9, now};
    if (Status s = exporter::WriteTextfile(dir_, exporter::LatencyRunFamilies(run_, info));
        !s && !warned_) {
      warned_ = true;
      fmt::print(stderr, "rtpulse: warning: --textfile: {} (the run goes on)\n", s.error().message);
    }
  }

  measure::RunObserver& inner_;
  std::string dir_;
  results::LatencyRun run_;
  bool warned_ = false;
};

int64_t MeasuredNs(const results::LatencyRun& run) {
  int64_t ns = 0;
  for (const auto& path : run.paths) ns += path.duration_ns;
  return ns;
}

int RunLatencyCommand(const LatencyOptions& o, const std::string& cmdline) {
  const sys::SystemInfo probe = sys::ProbeSystem(FsRoot::System());
  // --wake timerlat runs after the list's other paths (alone: the plan still gives the
  // threads' CPUs, interval and priority).
  const TimerlatWake wake = SplitTimerlatWake(o.wake);
  LatencyOptions measured_options = o;
  if (wake.timerlat) measured_options.wake = wake.others.empty() ? "abs" : wake.others;
  auto plan = BuildLatencyPlan(measured_options, probe.online_cpus);
  if (!plan) return ReportError(plan.error());
  std::optional<trace::TimerlatPlan> timerlat;
  if (wake.timerlat) {
    auto t = BuildTimerlatPlan(*plan, probe.online_cpus);
    if (!t) return ReportError(t.error());
    timerlat = std::move(*t);
  }
  const bool run_wake_paths = !wake.timerlat || !wake.others.empty();
  auto explain_plan = BuildExplainPlan(o, *plan, probe.online_cpus);
  if (!explain_plan) return ReportError(explain_plan.error());
  // --wake gpio: the lines are looked up (chip, line, in use) before anything runs or is
  // written; the probe requests them when it arms.
  for (const std::string* line : {&plan->gpio_wake, &plan->gpio_drive}) {
    if (line->empty()) continue;
    auto spec = measure::ParseGpioLine(*line);
    if (!spec) return ReportError(spec.error());
    auto info = measure::ResolveGpioLine(*spec);
    if (!info) return ReportError(info.error());
    if (info->used) return ReportError(measure::GpioLineInUse(*spec, *info));
  }
  std::optional<stats::Budget> budget;
  if (!o.budget.empty()) {
    auto parsed = stats::ParseBudget(o.budget);
    if (!parsed) return ReportError(UsageError("--budget: " + parsed.error().message));
    budget = *parsed;
  }

  std::unique_ptr<measure::SampleSink> sink;
  if (!o.samples.empty()) {
    measure::SamplesFileInfo info;
    info.start_realtime_ns = ClockNs(CLOCK_REALTIME);
    info.start_monotonic_ns = MonotonicNs();
    auto opened = measure::OpenSamplesFile(o.samples, info);
    if (!opened) return ReportError(opened.error());
    sink = std::move(*opened);
  } else if (o.verbose) {
    sink = measure::MakeVerboseSink(stdout);
  }

  std::vector<std::string> names;
  for (auto p : plan->paths) names.emplace_back(measure::WakePathName(p));
  // --json -: the JSON document alone goes to stdout; the text outputs go to stderr.
  const bool json_stdout = o.json == "-";
  std::FILE* text = json_stdout ? stderr : stdout;
  LiveView view(ChooseLiveMode(o.quiet || json_stdout, o.verbose), stdout, o.nsecs,
                plan->duration_ns, plan->loops, names);

  const std::vector<std::string> environment = sys::EnvironmentWarnings(probe);
  const bool script_mode = o.quiet || o.verbose || plan->linear_histogram_us > 0;
  for (const auto& w : environment) fmt::print(stderr, "rtpulse: warning: {}\n", w);

  measure::BlockRunSignals();
  // After BlockRunSignals: the explainer's threads inherit the mask, so SIGINT still reaches
  // the engine's synchronous wait and not a trace thread.
  std::unique_ptr<trace::Explainer> explainer;
  const bool explain_only_ring = *explain_plan && !sink;
  if (*explain_plan) {
    const bool quiet = o.quiet;
    explainer = trace::Explainer::Start(
        **explain_plan, [&view, quiet](const trace::Explanation& e, const std::string& verdict) {
          if (!quiet) view.Note(stderr, ExplainVerdictLine(e, verdict));
        });
    sink = std::make_unique<suite::ExplainSink>(explainer.get(), std::move(sink));
  }
  measure::RunRecord record;
  Status ran = Status::Ok();
  const int64_t start_realtime_ns = ClockNs(CLOCK_REALTIME);
  std::optional<TextfileObserver> textfile;
  if (!o.textfile.empty()) {
    results::LatencyRun facts;
    facts.rtpulse_version = kVersion;
    facts.start_realtime_ns = start_realtime_ns;
    suite::FillSystem(probe, facts);
    if (plan->inject) {
      facts.inject =
          results::InjectSettings{plan->inject->delay_ns, plan->inject->rate_hz,
                                  results::InjectDetectionThreshold(plan->inject->delay_ns)};
    }
    textfile.emplace(view, o.textfile, std::move(facts));
  }
  measure::RunObserver* observer =
      textfile ? static_cast<measure::RunObserver*>(&*textfile) : &view;
  if (run_wake_paths) {
    auto measured = measure::RunLatency(*plan, observer, std::move(sink));
    if (measured) {
      record = std::move(*measured);
    } else {
      ran = measured.error();
    }
  }
  if (ran && timerlat && !record.interrupted) {
    if (explainer) {
      // --explain on timerlat: each thread sample, as a probe's, from the trace's reader.
      timerlat->on_sample = [ex = explainer.get(),
                             cpus = timerlat->cpus](const trace::TimerlatSample& s) {
        const auto at = std::find(cpus.begin(), cpus.end(), s.cpu);
        const SampleRecord r{s.seq - 1,
                             s.expected_ns,
                             s.actual_ns,
                             static_cast<uint16_t>(at - cpus.begin()),
                             static_cast<uint16_t>(s.cpu),
                             0,
                             0,
                             0};
        ex->OnSamples(&r, 1);
      };
    }
    ran = RunTimerlatInto(*timerlat, record);
  }
  std::optional<trace::ExplainSummary> explained;
  if (explainer) explained = explainer->Finish();  // the instance goes, whatever happened
  if (!ran) {
    if (textfile) textfile->Failed();
    return ReportError(ran.error());
  }
  results::LatencyRun run = suite::ToLatencyRun(std::move(record));
  if (explain_only_ring) NoSamplesLogClaimed(run);
  if (explained) AddExplainToRun(*explained, o, **explain_plan, run);
  run.rtpulse_version = kVersion;
  run.cmdline = cmdline;
  suite::FillSystem(probe, run);
  run.warnings.insert(run.warnings.begin(), environment.begin(), environment.end());
  if (plan->inject) {
    run.inject = results::InjectSettings{plan->inject->delay_ns, plan->inject->rate_hz,
                                         results::InjectDetectionThreshold(plan->inject->delay_ns)};
  }
  run.return_code = run.interrupted ? ToInt(ExitCode::kInterrupted) : 0;
  if (!o.samples.empty() && run.samples_error.empty()) {
    // Exact percentiles from the log in place of the bucket edges; a log that does not hold
    // the run's samples leaves the bucket edges, with a warning that says why.
    for (auto& w : suite::AddLogPercentiles(run, o.samples, stats::kPercentiles)) {
      run.warnings.push_back(std::move(w));
    }
  }
  for (size_t i = environment.size(); i < run.warnings.size(); ++i) {
    fmt::print(stderr, "rtpulse: warning: {}\n", run.warnings[i]);
  }

  int exit_code = run.interrupted ? ToInt(ExitCode::kInterrupted) : ToInt(ExitCode::kOk);
  if (!run.samples_error.empty()) exit_code = ToInt(run.samples_error_code);
  const results::Verdict verdict = results::JudgeLatencyRun(run, budget);
  nlohmann::json document = results::ToJson(run, o.nsecs);
  document["verdict"] = results::VerdictJson(verdict);
  const bool budget_not_met = exit_code == ToInt(ExitCode::kOk) && budget && !verdict.Met();
  if (budget_not_met) document["return_code"] = ToInt(ExitCode::kBudgetNotMet);
  if (!o.textfile.empty()) {
    if (run.start_realtime_ns == 0) run.start_realtime_ns = start_realtime_ns;
    const exporter::RunInfo info{"latency", run.interrupted ? "interrupted" : "complete",
                                 static_cast<double>(run.start_realtime_ns) / 1e9,
                                 static_cast<double>(ClockNs(CLOCK_REALTIME)) / 1e9};
    if (Status s = exporter::WriteTextfile(o.textfile, exporter::LatencyRunFamilies(run, info));
        !s) {
      exit_code = ReportError(s.error());
    }
  }
  if (json_stdout) {
    std::fputs((document.dump(2) + "\n").c_str(), stdout);
  } else if (!o.json.empty()) {
    if (Status s = WriteFileAtomic(o.json, document.dump(2) + "\n"); !s) {
      exit_code = ReportError(s.error());
    }
  }
  std::string histogram;
  if (plan->linear_histogram_us > 0) {
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
  if (plan->linear_histogram_us == 0 && !o.verbose) {
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
  std::string summary;
  if (run.explain) summary += FormatExplainTable(*run.explain, MeasuredNs(run)) + "\n";
  summary += results::FormatSummary(run) + results::FormatVerdict(verdict);
  std::fputs(script_mode ? Commented(summary).c_str() : ("\n" + summary).c_str(), text);
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
