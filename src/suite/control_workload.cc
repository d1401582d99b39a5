#include "suite/control_workload.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "load/spec.h"
#include "measure/perf_counters.h"
#include "measure/sample_log.h"
#include "results/control_file.h"
#include "results/log_percentiles.h"
#include "suite/facts.h"
#include "suite/latency_record.h"
#include "suite/services.h"

namespace rtpulse::suite {
namespace {

/// The controller's Step() as the loop's job.
class ControllerJob final : public control::JobBody {
 public:
  explicit ControllerJob(control::FlightController& controller) : controller_(controller) {}
  void Run(uint64_t k) override { controller_.Step(k); }

 private:
  control::FlightController& controller_;
};

/// A controller as `settings` describe it (work set and calibrated passes applied).
Expected<std::unique_ptr<control::FlightController>> BuildController(
    const ControlSettings& settings) {
  const double dt_s = static_cast<double>(settings.period_ns) / 1e9;
  auto controller = std::make_unique<control::FlightController>(
      control::ControllerConfig::Defaults(dt_s), settings.seed);
  if (settings.work_set_bytes > 0) {
    if (Status s = controller->SetWorkSet(settings.work_set_bytes, settings.work_set_mode); !s) {
      return s.error();
    }
  }
  if (settings.calibration) controller->SetExtraPasses(settings.calibration->passes);
  return controller;
}

control::ControlLoopPlan LoopPlan(const ControlSettings& settings,
                                  const ControlConfiguration& config) {
  control::ControlLoopPlan plan;
  plan.policy = config.policy;
  plan.path = config.policy.kind == control::PolicySpec::Kind::kDeadline
                  ? measure::WakePath::kDeadline
                  : config.path;
  plan.period_ns = settings.period_ns;
  plan.deadline_ns = settings.deadline_ns;
  plan.jobs = settings.jobs;
  plan.cpu = settings.cpu;
  plan.lock_memory = true;
  plan.inject_every = settings.inject_every;
  plan.inject_ns = settings.inject_ns;
  return plan;
}

/// The late jobs of a running loop for the explainer: every ~100 ms the watching thread
/// (never the loop's) reads the jobs published since the last look, with the acquire order
/// control::JobsSoFar uses, and hands each whose start - release exceeds the threshold to
/// Explainer::OnSpike, so its window is still in the trace's retention. The first look that
/// sees the loop thread's tid hands it to the explainer as the probe (so with the full event
/// set its syscalls are traced from then on, at most ~100 ms after the loop started), and
/// every spike carries it.
class ControlSpikeFeed {
 public:
  ControlSpikeFeed(trace::Explainer* explainer, int64_t threshold_ns, int cpu, std::string wake)
      : explainer_(explainer), threshold_ns_(threshold_ns), cpu_(cpu), wake_(std::move(wake)) {}

  void Poll(const control::ControlLive& live) {
    if (explainer_ == nullptr) return;
    if (const int tid = live.tid.load(std::memory_order_acquire); tid > 0 && tid_ == 0) {
      tid_ = tid;
      trace::ProbeThreads threads;
      threads.wake = wake_;
      threads.probe_tids = {tid};
      explainer_->SetProbeThreads(threads);
    }
    const uint64_t n = live.jobs.load(std::memory_order_acquire);
    const control::JobTiming* const log = live.job_log.load(std::memory_order_acquire);
    if (log == nullptr) return;
    for (; seen_ < n; ++seen_) {
      const control::JobTiming& j = log[seen_];
      if (j.release_unknown || j.start_ns - j.release_ns <= threshold_ns_) continue;
      trace::SpikeInput spike;
      spike.cpu = cpu_;
      spike.thread = 0;
      spike.seq = seen_;
      spike.probe_tid = tid_;
      spike.expected_ns = j.release_ns;
      spike.actual_ns = j.start_ns;
      explainer_->OnSpike(spike);
      ++fed_;
    }
  }
  uint64_t fed() const { return fed_; }

 private:
  trace::Explainer* explainer_;
  int64_t threshold_ns_;
  int cpu_;
  std::string wake_;
  int tid_ = 0;  ///< The loop thread's, once seen.
  uint64_t seen_ = 0;
  uint64_t fed_ = 0;
};

/// Runs the loop on its own thread while this one takes signals and calls `tick` about
/// every 100 ms with the live counters.
Expected<control::ControlRunRecord> RunLoopWatched(
    const control::ControlLoopPlan& plan, control::JobBody& body, std::atomic<bool>& stop,
    const std::function<void(const control::ControlLive&)>& tick) {
  control::ControlLive live;
  std::optional<Expected<control::ControlRunRecord>> result;
  std::atomic<bool> done{false};
  std::thread loop([&] {
    result.emplace(control::RunControlLoop(plan, body, stop, &live));
    done.store(true, std::memory_order_release);
  });
  while (!done.load(std::memory_order_acquire)) {
    if (StopSignalWithin(100 * kNsPerMs)) stop.store(true);
    if (tick) tick(live);
  }
  loop.join();
  return std::move(*result);
}

std::vector<results::ControlJobRow> RowsOf(const control::ControlRunRecord& record) {
  std::vector<results::ControlJobRow> rows;
  rows.reserve(record.jobs.size());
  for (size_t i = 0; i < record.jobs.size(); ++i) {
    const control::JobTiming& j = record.jobs[i];
    rows.push_back(
        {i, j.release_ns, j.start_ns, j.end_ns, j.skipped_before, j.miss, !j.release_unknown});
  }
  return rows;
}

const char* PolicyKindName(control::PolicySpec::Kind kind) {
  switch (kind) {
    case control::PolicySpec::Kind::kOther:
      return "other";
    case control::PolicySpec::Kind::kFifo:
      return "fifo";
    case control::PolicySpec::Kind::kRr:
      return "rr";
    case control::PolicySpec::Kind::kDeadline:
      return "deadline";
  }
  return "unknown";
}

/// The scenario's probe: the response time c - r of every job in `histogram`; for every
/// release skipped after job i, c_i minus that release (how far into it the job that ran over
/// it ended) in `skipped_histogram`: the per-period rule of the samples log (a record followed
/// by a gap of k periods gives latency - T, ..., latency - kT), so both agree.
results::ProbeResult ResponseProbe(const control::ControlRunRecord& record,
                                   const ControlSettings& settings,
                                   const control::ControlLoopPlan& plan) {
  results::ProbeResult p;
  p.index = 0;
  p.cpu = settings.cpu;
  p.tid = record.tid;
  p.policy = PolicyKindName(plan.policy.kind);
  p.priority = plan.policy.kind == control::PolicySpec::Kind::kOther ? 0 : plan.policy.priority;
  p.interval_ns = settings.period_ns;
  p.wake = std::string(measure::WakePathName(plan.path));
  for (size_t i = 0; i < record.jobs.size(); ++i) {
    const control::JobTiming& j = record.jobs[i];
    // A deadline miss, as control.json and the study count them (for a job whose release is
    // unknown, only a certain one): one count in every file.
    if (j.miss) ++p.missed_activations;
    if (j.release_unknown) {
      // SCHED_DEADLINE restarted its period: the release is not known, so neither is the
      // response; counted as a grid restart (samples + skipped + restarts = periods).
      ++p.grid_restarts;
      if (!j.miss) ++p.misses_unknown;  // a miss only when certain: the count is a lower bound
      continue;
    }
    p.histogram.Record(j.end_ns - j.release_ns);
    // The releases job i ran past: the next job's skipped_before, or for the last job the
    // loop's skipped_after_last.
    const uint32_t ran_past =
        i + 1 < record.jobs.size() ? record.jobs[i + 1].skipped_before : record.skipped_after_last;
    for (uint32_t s = 1; s <= ran_past; ++s) {
      p.skipped_histogram.Record(j.end_ns - (j.release_ns + int64_t{s} * settings.period_ns));
    }
    p.last_latency_ns = j.end_ns - j.release_ns;
  }
  p.periods_elapsed = record.releases;
  p.skipped_periods = record.skipped;
  p.degraded = record.degraded;
  p.notes = record.warnings;
  return p;
}

/// samples.bin with one record per job: expected = release r, actual = completion c, so the
/// file's "latency" is the response time and `rtpulse wcet` reads it as any samples log.
Status WriteResponseSamples(const std::string& path, const control::ControlRunRecord& record,
                            int cpu, measure::WakePath wake) {
  SamplesFileInfo info;
  info.start_realtime_ns = record.start_realtime_ns;
  info.start_monotonic_ns = record.jobs.empty() ? MonotonicNs() : record.jobs.front().release_ns;
  auto sink = measure::OpenSamplesFile(path, info);
  if (!sink) return sink.error();
  std::vector<SampleRecord> out;
  out.reserve(record.jobs.size());
  uint64_t seq = 0;
  for (size_t i = 0; i < record.jobs.size(); ++i) {
    const control::JobTiming& j = record.jobs[i];
    seq += (i == 0 ? 0 : 1) + j.skipped_before;
    if (j.release_unknown) continue;  // as in the histogram: no known response
    SampleRecord r{};
    r.seq = seq;
    r.expected_ns = j.release_ns;
    r.actual_ns = j.end_ns;
    r.thread = 0;
    r.cpu = static_cast<uint16_t>(std::max(cpu, 0));
    r.wake_path = static_cast<uint8_t>(wake);
    // The deadline miss (c > r + deadline), the one count of result.json and control.json;
    // with the default deadline (the period) it is the job that ran past the next release.
    r.flags = j.miss ? SampleRecord::kMissed : 0;
    out.push_back(r);
  }
  if (Status s = (*sink)->Write(out.data(), out.size()); !s) return s;
  return (*sink)->Finish(0, record.interrupted);
}

/// A 1 us histogram: the non-empty classes, values rounded down.
results::MicrosecondClasses MicrosecondHistogram(const std::vector<int64_t>& values_ns) {
  std::map<int64_t, uint64_t> classes;
  for (const int64_t v : values_ns) {
    const int64_t us = v >= 0 ? v / kNsPerUs : -((-v + kNsPerUs - 1) / kNsPerUs);
    ++classes[us];
  }
  return {classes.begin(), classes.end()};
}

std::map<std::string, results::ControlCounter> Counters(
    const std::vector<measure::CounterReading>& counters) {
  std::map<std::string, results::ControlCounter> out;
  for (const auto& c : counters) {
    results::ControlCounter& counter = out[std::string(measure::CounterName(c.counter))];
    if (c.supported) {
      counter.value = c.value;
      counter.multiplexed = c.multiplexed;
    } else {
      counter.unsupported = c.unsupported;
    }
  }
  return out;
}

std::optional<results::ControlCalibration> Calibration(const ControlSettings& settings) {
  if (!settings.calibration) return std::nullopt;
  const control::Calibration& c = *settings.calibration;
  return results::ControlCalibration{
      settings.exec_ns, c.passes, c.measured_ns, c.base_ns,
      "calibrated once on this CPU at its frequency then (before any load): a different "
      "frequency or governor changes the execution time"};
}

nlohmann::json CostJson(const ControlOutcome& outcome, const stats::ReplaySettings& replay) {
  if (!outcome.cost) return {{"error", outcome.cost_error}};
  const stats::ReplayResult& r = *outcome.cost;
  return {{"settings", stats::DescribeReplaySettings(replay)},
          {"cost", r.cost},
          {"ideal_cost", r.ideal_cost},
          {"cost_increase_pct", r.cost_increase_pct},
          {"peak_error_rad", r.peak_error_rad},
          {"ideal_peak_error_rad", r.ideal_peak_error_rad},
          {"worst_stall_ns", r.worst_stall_ns},
          {"jobs", r.jobs},
          {"skipped", r.skipped},
          {"horizon_s", r.horizon_s},
          {"outside_model", r.outside_model},
          {"summary", stats::DescribeReplayResult(r)}};
}

std::string WorkSetModeName(control::WorkSetMode mode) {
  return mode == control::WorkSetMode::kRandom ? "random" : "streaming";
}

}  // namespace

std::vector<stats::ReplayJob> ReplayJobsFromRows(const std::vector<results::ControlJobRow>& rows) {
  std::vector<stats::ReplayJob> jobs;
  jobs.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    // A skipped release before the first job is no release of this run.
    if (i > 0) {
      for (uint32_t s = 0; s < rows[i].skipped_before; ++s) jobs.push_back({0, 0, false});
    }
    jobs.push_back(
        {rows[i].start_ns - rows[i].release_ns, rows[i].end_ns - rows[i].release_ns, true});
  }
  return jobs;
}

Expected<control::Calibration> CalibrateOnCpu(const ControlSettings& settings) {
  ControlSettings uncalibrated = settings;
  uncalibrated.calibration.reset();
  auto controller = BuildController(uncalibrated);
  if (!controller) return controller.error();
  cpu_set_t before;
  const bool had_mask = sched_getaffinity(0, sizeof(before), &before) == 0;
  if (settings.cpu >= 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(static_cast<size_t>(settings.cpu), &one);
    sched_setaffinity(0, sizeof(one), &one);
  }
  auto calibration = control::CalibrateExec(**controller, settings.exec_ns);
  if (had_mask) sched_setaffinity(0, sizeof(before), &before);
  if (!calibration) {
    return Error{calibration.error().code, "--exec: " + calibration.error().message};
  }
  return calibration;
}

ControlWorkload::ControlWorkload(ControlSettings settings, sys::SystemInfo info,
                                 std::string version, std::string invocation)
    : settings_(std::move(settings)),
      info_(std::move(info)),
      version_(std::move(version)),
      invocation_(std::move(invocation)) {
  notes_ = settings_.notes;
  if (settings_.calibration) {
    notes_.push_back(fmt::format(
        "--exec {} us: {} extra passes ({} ns measured), calibrated on CPU {} at its frequency "
        "then; another frequency changes the execution time",
        settings_.exec_ns / kNsPerUs, settings_.calibration->passes,
        settings_.calibration->measured_ns, settings_.cpu));
  }
  if (settings_.inject_every > 0) {
    notes_.push_back(fmt::format(
        "--inject-exec {}:{}ns (a test aid): every {}th job runs {} ns longer",
        settings_.inject_every, settings_.inject_ns, settings_.inject_every, settings_.inject_ns));
  }
}

nlohmann::json ControlWorkload::ConfigJson() const {
  nlohmann::json configurations = nlohmann::json::array();
  for (const auto& c : settings_.configurations) {
    configurations.push_back({{"scenario", c.scenario},
                              {"policy", control::FormatPolicySpec(c.policy)},
                              {"wake", measure::WakePathName(c.path)},
                              {"loaded", c.loaded}});
  }
  return {{"workload", "control"},
          {"policy", "per scenario"},
          {"interval_us", settings_.period_ns / kNsPerUs},
          {"period_ns", settings_.period_ns},
          {"deadline_ns", settings_.deadline_ns > 0 ? settings_.deadline_ns : settings_.period_ns},
          {"jobs", settings_.jobs},
          {"cpu", settings_.cpu},
          {"work_set_bytes", settings_.work_set_bytes},
          {"work_set_mode", WorkSetModeName(settings_.work_set_mode)},
          {"latency_quantity", "response time (completion - release) of the control job"},
          {"configurations", configurations},
          {"loads", settings_.load_specs}};
}

namespace {

/// --explain's tracer on the job's CPU, its raw windows in `dir`/explain and each verdict line
/// queued in `verdicts`; none without --explain.
std::unique_ptr<trace::Explainer> StartControlExplainer(const ControlSettings& settings,
                                                        const std::string& dir,
                                                        SuiteVerdictLines& verdicts) {
  if (!settings.explain) return nullptr;
  trace::ExplainPlan explain = *settings.explain;
  explain.window_dir = dir + "/explain";
  explain.session.cpus = {settings.cpu};
  return trace::Explainer::Start(
      explain, [&verdicts, line = settings.verdict_line](const trace::Explanation& e,
                                                         const std::string& verdict) {
        verdicts.Add(line ? line(e, verdict) : verdict);
      });
}

/// --explain's end: the jobs of the loop's last tick fed to `explainer` (when the loop ran:
/// `record`), then the explainer finished, whatever is still queued with it; none without
/// --explain.
std::optional<trace::ExplainSummary> FinishControlExplainer(
    trace::Explainer* explainer, ControlSpikeFeed& feed, const control::ControlRunRecord* record) {
  if (!explainer) return std::nullopt;
  if (record) {
    control::ControlLive done;
    done.tid.store(record->tid, std::memory_order_release);
    done.job_log.store(record->jobs.data(), std::memory_order_release);
    done.jobs.store(record->jobs.size(), std::memory_order_release);
    feed.Poll(done);
  }
  return explainer->Finish();
}

/// A checkpoint's path: the jobs the loop has published so far (control::JobsSoFar, with
/// release order), converted as the end converts all of them, so a killed run keeps this
/// configuration's response times up to its last checkpoint.
results::PathRun CheckpointPath(const control::ControlLive& live, const ControlSettings& settings,
                                const control::ControlLoopPlan& plan, int64_t start_realtime_ns,
                                int64_t elapsed_ns) {
  control::ControlRunRecord so_far;
  so_far.jobs = control::JobsSoFar(live);
  for (const control::JobTiming& j : so_far.jobs) {
    so_far.skipped += j.skipped_before;
    so_far.misses += j.miss ? 1 : 0;
  }
  so_far.releases = so_far.jobs.size() + so_far.skipped;
  results::PathRun path;
  path.wake = std::string(measure::WakePathName(plan.path));
  path.start_realtime_ns = start_realtime_ns;
  path.end_realtime_ns = ClockNs(CLOCK_REALTIME);
  path.duration_ns = elapsed_ns;
  results::ProbeResult p = ResponseProbe(so_far, settings, plan);
  p.notes.push_back(fmt::format(
      "checkpoint: the {} jobs so far ({} releases); the configuration was still running",
      so_far.jobs.size(), so_far.releases));
  path.probes.push_back(std::move(p));
  return path;
}

/// What the control summary keeps of a scenario: its rows, counts and the replayed cost.
ControlOutcome ControlOutcomeOf(const std::string& name, const ControlConfiguration& config,
                                const control::ControlRunRecord& record,
                                const stats::ReplaySettings& replay) {
  ControlOutcome outcome;
  outcome.scenario = name;
  outcome.configuration = config.configuration;
  outcome.policy_path = config.policy_path;
  outcome.loaded = config.loaded;
  outcome.rows = RowsOf(record);
  outcome.releases = record.releases;
  outcome.skipped = record.skipped;
  outcome.misses = record.misses;
  outcome.interrupted = record.interrupted;
  const auto unknown = static_cast<uint64_t>(
      std::count_if(outcome.rows.begin(), outcome.rows.end(),
                    [](const results::ControlJobRow& r) { return !r.release_known; }));
  if (outcome.rows.empty()) {
    outcome.cost_error = "no job ran";
  } else if (unknown > 0) {
    // The replay needs each job's sample and actuation times from its release.
    outcome.cost_error = fmt::format(
        "{} job(s)' release unknown (SCHED_DEADLINE restarted its period), and "
        "the replay needs every job's times from its release",
        unknown);
  } else if (auto cost = stats::ReplayControlCost(ReplayJobsFromRows(outcome.rows), replay)) {
    outcome.cost = *cost;
  } else {
    outcome.cost_error = cost.error().message;
  }
  return outcome;
}

/// The scenario's statistical report's facts: counts, times and every note of the run.
results::ControlScenarioFacts ControlFactsOf(const ControlConfiguration& config,
                                             const ControlSettings& settings,
                                             const control::ControlRunRecord& record,
                                             const std::vector<std::string>& notes) {
  results::ControlScenarioFacts facts;
  facts.configuration = config.configuration;
  facts.period_ns = settings.period_ns;
  facts.deadline_ns = settings.deadline_ns > 0 ? settings.deadline_ns : settings.period_ns;
  facts.releases = record.releases;
  facts.skipped = record.skipped;
  facts.skipped_after_last = record.skipped_after_last;
  facts.misses = record.misses;
  facts.interrupted = record.interrupted;
  facts.notes = notes;
  if (!record.rt_throttling.empty()) facts.notes.push_back(record.rt_throttling);
  if (record.deadline_overruns) {
    facts.notes.push_back(fmt::format("SCHED_DEADLINE overruns signalled by the kernel: {}",
                                      *record.deadline_overruns));
  }
  for (const auto& w : record.warnings) facts.notes.push_back(w);
  return facts;
}

/// control.json of the scenario (results::ControlFile), but for the loop thread's counters
/// and the controller's checksum, which the caller holds.
results::ControlFile ControlFileOf(const std::string& name, const ControlConfiguration& config,
                                   const ControlSettings& settings, measure::WakePath path,
                                   const control::ControlRunRecord& record,
                                   const ControlOutcome& outcome,
                                   const stats::ReplaySettings& replay) {
  results::ControlFile file;
  file.scenario = name;
  file.configuration = config.configuration;
  file.policy = control::FormatPolicySpec(config.policy);
  file.applied_policy = record.applied_policy;
  file.wake = measure::WakePathName(path);
  file.loaded = config.loaded;
  if (config.loaded) file.loads = settings.load_specs;
  file.cpu = settings.cpu;
  file.tid = record.tid;
  file.period_ns = settings.period_ns;
  file.deadline_ns = settings.deadline_ns > 0 ? settings.deadline_ns : settings.period_ns;
  file.jobs_planned = settings.jobs;
  file.jobs = record.jobs.size();
  file.releases = record.releases;
  file.skipped = record.skipped;
  file.skipped_after_last = record.skipped_after_last;
  file.misses = record.misses;
  file.grid_restarts = record.grid_restarts;
  file.rt_throttle_suspects = record.rt_throttle_suspects;
  file.interrupted = record.interrupted;
  file.degraded = record.degraded;
  file.warnings = record.warnings;
  file.rt_throttling = record.rt_throttling;
  file.deadline_overruns = record.deadline_overruns;
  file.work_set_bytes = settings.work_set_bytes;
  file.work_set_mode = WorkSetModeName(settings.work_set_mode);
  file.calibration = Calibration(settings);
  if (settings.inject_every > 0) file.inject = {settings.inject_every, settings.inject_ns};
  file.control_cost = CostJson(outcome, replay);
  file.latency_quantity = "response time c - r (result.json's latency of this scenario)";
  std::vector<int64_t> latency_ns, exec_ns, response_ns;
  for (size_t i = 0; i < record.jobs.size(); ++i) {
    const auto& j = record.jobs[i];
    exec_ns.push_back(j.end_ns - j.start_ns);
    if (j.release_unknown) {
      file.release_unknown_jobs.push_back(i);  // no latency and no response: not 0
      if (!j.miss) ++file.misses_unknown;
      continue;
    }
    latency_ns.push_back(j.start_ns - j.release_ns);
    response_ns.push_back(j.end_ns - j.release_ns);
  }
  file.wakeup_latency_us = MicrosecondHistogram(latency_ns);
  file.execution_us = MicrosecondHistogram(exec_ns);
  file.response_us = MicrosecondHistogram(response_ns);
  return file;
}

/// The scenario's result.json entry: one path whose probe is the jobs' response times.
results::LatencyRun ControlLatencyRunOf(const control::ControlRunRecord& record,
                                        const ControlSettings& settings,
                                        const control::ControlLoopPlan& plan,
                                        const sys::SystemInfo& info, const std::string& version,
                                        const std::string& invocation, int64_t duration_ns) {
  results::LatencyRun m;
  m.rtpulse_version = version;
  m.cmdline = invocation;
  FillSystem(info, m);
  m.start_realtime_ns = record.start_realtime_ns;
  m.end_realtime_ns = record.end_realtime_ns;
  m.interrupted = record.interrupted;
  m.degraded = record.degraded;
  m.warnings = record.warnings;
  results::PathRun path;
  path.wake = std::string(measure::WakePathName(plan.path));
  path.start_realtime_ns = record.start_realtime_ns;
  path.end_realtime_ns = record.end_realtime_ns;
  path.duration_ns = duration_ns;
  path.probes.push_back(ResponseProbe(record, settings, plan));
  m.paths.push_back(std::move(path));
  return m;
}

}  // namespace

Expected<Measured> ControlWorkload::Measure(
    const std::string& dir, const std::string& name, int64_t /*duration_ns*/, int64_t checkpoint_ns,
    const std::function<void(const results::LatencyRun&)>& checkpoint, Progress& progress) {
  const auto found =
      std::find_if(settings_.configurations.begin(), settings_.configurations.end(),
                   [&](const ControlConfiguration& c) { return c.scenario == name; });
  if (found == settings_.configurations.end()) {
    return Failure(fmt::format("no control configuration for scenario '{}'", name));
  }
  const ControlConfiguration& config = *found;
  auto controller = BuildController(settings_);
  if (!controller) return controller.error();
  ControllerJob job(**controller);
  control::ControlLoopPlan plan = LoopPlan(settings_, config);
  measure::ThreadCounters counters;
  std::vector<measure::CounterReading> readings;
  std::string counters_error;
  plan.before_loop = [&] {
    if (Status s = counters.Open(0); !s) {
      counters_error = s.error().message;
      return;
    }
    counters.Enable();
  };
  plan.after_loop = [&] {
    if (!counters_error.empty()) return;
    counters.Disable();
    readings = counters.Read();
  };

  results::LatencyRun partial;  // what each checkpoint writes
  partial.rtpulse_version = version_;
  partial.cmdline = invocation_;
  FillSystem(info_, partial);
  partial.start_realtime_ns = ClockNs(CLOCK_REALTIME);
  const int64_t start_ns = MonotonicNs();
  int64_t next_checkpoint_ns = start_ns + checkpoint_ns;
  std::atomic<bool> stop{false};
  SuiteVerdictLines verdicts;
  std::unique_ptr<trace::Explainer> explainer = StartControlExplainer(settings_, dir, verdicts);
  ControlSpikeFeed feed(explainer.get(), settings_.explain ? settings_.explain->threshold_ns : 0,
                        settings_.cpu, std::string(measure::WakePathName(plan.path)));
  const auto tick = [&](const control::ControlLive& live) {
    feed.Poll(live);
    if (progress.WantsTicks()) verdicts.SayAll(progress);
    const int64_t now = MonotonicNs();
    if (progress.WantsTicks()) {
      LiveStatus s;
      s.elapsed_ns = now - start_ns;
      s.samples = live.jobs.load(std::memory_order_relaxed);
      s.max_ns = live.max_response_ns.load(std::memory_order_relaxed);
      s.missed = live.misses.load(std::memory_order_relaxed);
      progress.Measuring(s);
    }
    if (checkpoint_ns > 0 && now >= next_checkpoint_ns) {
      next_checkpoint_ns = now + checkpoint_ns;
      partial.paths.clear();
      partial.paths.push_back(
          CheckpointPath(live, settings_, plan, partial.start_realtime_ns, now - start_ns));
      partial.end_realtime_ns = ClockNs(CLOCK_REALTIME);
      checkpoint(partial);
    }
  };
  auto ran = RunLoopWatched(plan, job, stop, tick);
  std::optional<trace::ExplainSummary> explained =
      FinishControlExplainer(explainer.get(), feed, ran ? &*ran : nullptr);
  if (progress.WantsTicks()) verdicts.SayAll(progress);
  if (!ran) return ran.error();
  const control::ControlRunRecord& record = *ran;
  const int64_t end_ns = MonotonicNs();

  stats::ReplaySettings replay;
  replay.period_ns = settings_.period_ns;
  ControlOutcome outcome = ControlOutcomeOf(name, config, record, replay);

  Measured out;
  out.interrupted = record.interrupted;
  for (const auto& w : record.warnings) out.warnings.push_back(w);
  const auto keep = [&](const Status& s) {
    if (!s) out.warnings.push_back(s.error().message);
  };
  if (!outcome.rows.empty()) {
    keep(results::WriteResponseTimes(dir + "/response_times.txt", outcome.rows));
    keep(results::WriteStatisticalReport(dir + "/statistical_report.txt", outcome.rows,
                                         ControlFactsOf(config, settings_, record, notes_)));
  }
  keep(results::WriteJobLog(dir + "/jobs.csv", outcome.rows));
  if (Status s = WriteResponseSamples(dir + "/samples.bin", record, settings_.cpu, plan.path); s) {
    out.samples_file = name + "/samples.bin";
  } else {
    out.warnings.push_back("no samples.bin: " + s.error().message);
  }

  results::ControlFile file =
      ControlFileOf(name, config, settings_, plan.path, record, outcome, replay);
  file.counters_error = counters_error;
  if (counters_error.empty()) file.counters = Counters(readings);
  file.checksum = (*controller)->checksum();
  keep(WriteFileAtomic(dir + "/control.json", results::ToJson(file).dump(2) + "\n"));

  out.latency =
      ControlLatencyRunOf(record, settings_, plan, info_, version_, invocation_, end_ns - start_ns);
  if (explained) {
    results::LatencyRun& m = out.latency;
    m.explain = SuiteExplainResult(*explained, std::filesystem::path(dir).parent_path().string(),
                                   out.warnings);
    m.explain->notes.push_back(
        "control: a spike is a job whose start - release (the wake-up latency) exceeds the "
        "threshold; the scenario's latency statistics are response times");
  }
  if (!out.samples_file.empty()) AddExactPercentiles(dir + "/samples.bin", true, out);
  outcomes_.push_back(std::move(outcome));
  return out;
}

RunCondition MakeInterferenceRunner(const InterferencePlan& plan, const ControlSettings& settings,
                                    std::atomic<bool>& stop, const std::string& log_dir) {
  return [plan, settings, &stop, log_dir](InterferenceCondition condition,
                                          int repetition) -> Expected<InterferenceRun> {
    InterferenceRun run;
    run.condition = condition;
    run.repetition = repetition;
    Scenario scenario;
    scenario.name = std::string(ConditionName(condition));
    for (const std::string& text : ConditionLoads(condition, plan)) {
      auto spec = load::ParseLoadSpec(text);
      if (!spec) return spec.error();
      scenario.loads.push_back(std::move(*spec));
      scenario.load_specs.push_back(text);
    }
    std::unique_ptr<ScenarioLoads> loads;
    if (!scenario.loads.empty()) {
      loads = StartableLoads(scenario, log_dir);
      if (Status s = loads->Start(); !s) return s.error();
      // The loads' processes start and reach their working set before the job runs.
      if (StopSignalWithin(500 * kNsPerMs)) stop.store(true);
    }
    ControlSettings s = settings;
    s.jobs = plan.jobs_per_run;
    s.cpu = plan.cpu;
    s.work_set_bytes = plan.work_set_bytes;
    auto controller = BuildController(s);
    if (!controller) {
      if (loads) loads->Stop();
      return controller.error();
    }
    ControllerJob job(**controller);
    control::ControlLoopPlan loop = LoopPlan(s, s.configurations.front());
    measure::ThreadCounters counters;
    std::string counters_error;
    loop.before_loop = [&] {
      if (Status st = counters.Open(0); !st) {
        counters_error = st.error().message;
        return;
      }
      counters.Enable();
    };
    loop.after_loop = [&] {
      if (!counters_error.empty()) return;
      counters.Disable();
      run.counters = counters.Read();
    };
    auto ran = stop.load() ? Expected<control::ControlRunRecord>(control::ControlRunRecord{})
                           : RunLoopWatched(loop, job, stop, {});
    if (loads) {
      loads->Stop();
      for (auto& w : loads->Warnings()) run.warnings.push_back(std::move(w));
    }
    if (!ran) return ran.error();
    if (!counters_error.empty()) run.warnings.push_back("counters: " + counters_error);
    for (auto& w : ran->warnings) run.warnings.push_back(std::move(w));
    run.exec_ns.reserve(ran->jobs.size());
    for (const auto& j : ran->jobs) run.exec_ns.push_back(j.end_ns - j.start_ns);
    return run;
  };
}

results::ControlSummary ControlSummaryOf(const ControlWorkload& workload) {
  results::ControlSummary summary;
  for (const ControlOutcome& o : workload.outcomes()) {
    results::ControlSummaryConfiguration c;
    c.row = results::SummarizeControlScenario(o.scenario, o.configuration, o.rows, o.skipped);
    c.releases = o.releases;
    c.interrupted = o.interrupted;
    if (o.cost) {
      c.cost = results::ControlSummaryCost{o.cost->cost_increase_pct, o.cost->peak_error_rad,
                                           o.cost->worst_stall_ns, o.cost->outside_model,
                                           stats::DescribeReplayResult(*o.cost)};
    } else {
      c.cost_error = o.cost_error;
    }
    summary.configurations.push_back(std::move(c));
  }
  return summary;
}

}  // namespace rtpulse::suite
