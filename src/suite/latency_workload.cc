#include "suite/latency_workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "core/clock.h"
#include "measure/engine.h"
#include "measure/sample_log.h"
#include "results/log_percentiles.h"
#include "suite/explain_sink.h"
#include "suite/facts.h"
#include "suite/latency_record.h"
#include "suite/timerlat_record.h"

namespace rtpulse::suite {

namespace {

/// The engine's observer: live status to the runner's progress, checkpoints (turned into
/// results) to the runner.
class Relay final : public measure::RunObserver {
 public:
  Relay(Progress& progress, int64_t checkpoint_ns,
        const std::function<void(results::PathRun, size_t)>& checkpoint,
        SuiteVerdictLines* verdicts)
      : progress_(progress),
        checkpoint_ns_(checkpoint_ns),
        checkpoint_(checkpoint),
        verdicts_(verdicts) {}

  bool WantsTicks() const override { return progress_.WantsTicks(); }
  void OnTick(const std::vector<measure::LiveProbe>& probes, int64_t elapsed_ns) override {
    if (verdicts_ != nullptr) verdicts_->SayAll(progress_);
    LiveStatus s;
    s.elapsed_ns = elapsed_ns;
    for (const auto& p : probes) {
      s.max_ns = std::max(s.max_ns, p.max_ns);
      s.p99_ns = std::max(s.p99_ns, p.p99_ns);
      s.missed += p.missed;
      s.samples += p.count;
    }
    progress_.Measuring(s);
  }
  int64_t CheckpointIntervalNs() const override { return checkpoint_ns_; }
  void OnCheckpoint(size_t path_index, const measure::PathRecord& snapshot) override {
    // A copy: the engine reuses the snapshot for its next checkpoint.
    checkpoint_(ToPathRun(snapshot), path_index);
  }

 private:
  Progress& progress_;
  int64_t checkpoint_ns_;
  const std::function<void(results::PathRun, size_t)>& checkpoint_;
  SuiteVerdictLines* verdicts_;
};

/// With --explain and no --samples the rings exist for the explainer alone: nothing was
/// logged, so the result must not say so.
void SuiteNoSamplesLogged(results::LatencyRun& run) {
  for (auto& path : run.paths) {
    for (auto& p : path.probes) p.samples_logged = 0;
  }
}

}  // namespace

Expected<measure::LatencyPlan> SuiteLatencyPlan(const LatencySettings& settings) {
  if (settings.cpus.empty()) return UsageError("no CPU to measure on");
  if (settings.priority < 1 || settings.priority > 99) {
    return UsageError(fmt::format("priority {} is out of range for SCHED_FIFO probes: use -p 1..99",
                                  settings.priority));
  }
  measure::LatencyPlan plan;
  plan.notes = settings.notes;
  plan.threads = measure::PinnedThreads(settings.cpus, SchedPolicy::kFifo, settings.priority,
                                        settings.interval_ns);
  plan.paths = settings.wake;
  if (Status s = measure::CheckOnePerProcess(plan.paths, plan.threads.size(), "CPUs are measured",
                                             "add --cpus N");
      !s) {
    return s.error();
  }
  plan.linear_histogram_us = kLinearHistogramUs;
  // --explain reads the samples as the writer drains the rings, so it needs them too.
  if (settings.samples || settings.explain) {
    plan.sample_ring_capacity = measure::SampleRingCapacity(plan.threads);
  }
  return plan;
}

LatencyWorkload::LatencyWorkload(measure::LatencyPlan plan, LatencySettings settings,
                                 sys::SystemInfo info, std::string version, std::string invocation)
    : plan_(std::move(plan)),
      settings_(std::move(settings)),
      info_(std::move(info)),
      version_(std::move(version)),
      invocation_(std::move(invocation)) {}

nlohmann::json LatencyWorkload::ConfigJson() const {
  std::vector<std::string> wake;
  for (const auto w : plan_.paths) wake.emplace_back(measure::WakePathName(w));
  if (settings_.timerlat) wake.emplace_back(kTimerlatPath);
  return {
      {"priority", settings_.priority},
      {"policy", "fifo"},
      {"interval_us", settings_.interval_ns / kNsPerUs},
      {"wake", wake},
      {"linear_histogram_us", plan_.linear_histogram_us},
      {"explain_threshold_ns", settings_.explain ? nlohmann::json(settings_.explain->threshold_ns)
                                                 : nlohmann::json(nullptr)}};
}

void LatencyWorkload::FillRunFacts(results::LatencyRun& run) const {
  run.rtpulse_version = version_;
  run.cmdline = invocation_;
  FillSystem(info_, run);
}

Expected<Measured> LatencyWorkload::Measure(
    const std::string& dir, const std::string& name, int64_t duration_ns, int64_t checkpoint_ns,
    const std::function<void(const results::LatencyRun&)>& checkpoint, Progress& progress) {
  Measured out;
  measure::LatencyPlan plan = plan_;
  plan.duration_ns = duration_ns;
  std::unique_ptr<measure::SampleSink> sink;
  bool sink_opened = false;
  if (settings_.samples) {
    measure::SamplesFileInfo info;
    info.start_realtime_ns = ClockNs(CLOCK_REALTIME);
    info.start_monotonic_ns = MonotonicNs();
    auto opened = measure::OpenSamplesFile(dir + "/samples.bin", info);
    if (!opened) {
      out.warnings.push_back("no per-sample log: " + opened.error().message);
    } else {
      sink = std::move(*opened);
      sink_opened = true;
      out.samples_file = name + "/samples.bin";
    }
  }
  // Checkpoints: the paths finished so far plus a live snapshot of the running one.
  results::LatencyRun partial;
  FillRunFacts(partial);
  partial.start_realtime_ns = ClockNs(CLOCK_REALTIME);
  const std::function<void(results::PathRun, size_t)> on_checkpoint = [&](results::PathRun snapshot,
                                                                          size_t path_index) {
    partial.paths.resize(path_index);
    partial.paths.push_back(std::move(snapshot));
    partial.end_realtime_ns = ClockNs(CLOCK_REALTIME);
    checkpoint(partial);
  };
  std::unique_ptr<trace::Explainer> explainer;
  std::optional<trace::ExplainSummary> explained;
  SuiteVerdictLines verdicts;
  if (settings_.explain) {
    trace::ExplainPlan explain = *settings_.explain;
    explain.window_dir = dir + "/explain";
    explainer = trace::Explainer::Start(
        explain, [&verdicts, line = settings_.verdict_line](const trace::Explanation& e,
                                                            const std::string& verdict) {
          verdicts.Add(line ? line(e, verdict) : verdict);
        });
    sink = std::make_unique<ExplainSink>(explainer.get(), std::move(sink));
  }
  Relay relay(progress, checkpoint_ns, on_checkpoint, &verdicts);
  measure::RunRecord record;
  if (!plan.paths.empty()) {
    auto measured = measure::RunLatency(plan, &relay, std::move(sink));
    // The trace instance goes whatever happened to the run.
    if (explainer) explained = explainer->Finish();
    if (progress.WantsTicks()) verdicts.SayAll(progress);
    if (!measured) return measured.error();
    record = std::move(*measured);
  }
  if (settings_.timerlat && !record.interrupted) {
    // After the probes' paths, for the same time (no checkpoint while the tracer runs).
    trace::TimerlatPlan timerlat = *settings_.timerlat;
    timerlat.duration_ns = duration_ns;
    if (Status s = RunTimerlatInto(timerlat, record); !s) return s.error();
  }
  results::LatencyRun m = ToLatencyRun(std::move(record));
  FillRunFacts(m);
  if (explained) {
    if (!sink_opened) SuiteNoSamplesLogged(m);
    m.explain = SuiteExplainResult(*explained, std::filesystem::path(dir).parent_path().string(),
                                   out.warnings);
  }
  out.interrupted = m.interrupted;
  const bool logged = sink_opened && m.samples_error.empty();
  if (!m.samples_error.empty()) {
    out.write_error = Error{m.samples_error_code, "samples log: " + m.samples_error};
  }
  out.latency = std::move(m);
  if (logged) AddExactPercentiles(dir + "/samples.bin", true, out);
  return out;
}

}  // namespace rtpulse::suite
