#include "suite/e2e_workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/fs_root.h"
#include "core/histogram.h"
#include "measure/sample_log.h"
#include "results/e2e_file.h"
#include "results/log_percentiles.h"
#include "suite/facts.h"
#include "suite/latency_record.h"
#include "suite/services.h"

namespace rtpulse::suite {
namespace {

constexpr const char* kE2eModelLabel = "latency-representative, not trained";

std::string E2eModeName(e2e::PipelineMode mode) {
  return mode == e2e::PipelineMode::kPeriodic ? "periodic" : "back-to-back";
}

int64_t E2eDeadlineNs(const e2e::PipelineSettings& p) {
  if (p.deadline_ns > 0) return p.deadline_ns;
  if (p.mode == e2e::PipelineMode::kPeriodic && p.fps > 0) {
    return static_cast<int64_t>(1e9 / p.fps + 0.5);
  }
  return 0;
}

/// samples.bin with one record per frame: expected = capture, actual = alert, so the file's
/// "latency" is Total and `rtpulse wcet` reads it as any samples log.
Status WriteE2eSamples(const std::string& path, const std::vector<results::E2eFrameRow>& rows,
                       int64_t start_realtime_ns, bool interrupted) {
  SamplesFileInfo info;
  info.start_realtime_ns = start_realtime_ns;
  info.start_monotonic_ns = rows.empty() ? MonotonicNs() : rows.front().capture_ns;
  auto sink = measure::OpenSamplesFile(path, info);
  if (!sink) return sink.error();
  std::vector<SampleRecord> out;
  out.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    SampleRecord r{};
    r.seq = i;
    r.expected_ns = rows[i].capture_ns;
    r.actual_ns = rows[i].alert_ns;
    r.thread = 0;
    r.cpu = 0;
    r.wake_path = 0;
    r.flags = rows[i].miss ? SampleRecord::kMissed : 0;
    out.push_back(r);
  }
  if (Status s = (*sink)->Write(out.data(), out.size()); !s) return s;
  return (*sink)->Finish(0, interrupted);
}

/// The scenario's probe: Total of every frame in its histogram. Periodic: the interval is the
/// frame period, a skipped period a dropped frame (released, never processed), a missed
/// activation a frame above the deadline; a dropped frame has no Total, so the per-period
/// statistics are not known. Back to back: no period (interval 0, no per-period block), and
/// without --deadline the misses are not counted (null, never 0).
results::ProbeResult E2eTotalProbe(const std::vector<results::E2eFrameRow>& rows,
                                   const e2e::PipelineResult& run, const E2eSettings& settings) {
  results::ProbeResult p;
  p.index = 0;
  p.cpu =
      settings.pipeline.inference.cpus.size() == 1 ? settings.pipeline.inference.cpus.front() : -1;
  for (const auto& t : run.threads) {
    if (t.role == "inference") p.tid = t.tid;
  }
  p.policy = settings.pipeline.inference.policy;
  p.priority = settings.pipeline.inference.priority;
  const bool periodic = settings.pipeline.mode == e2e::PipelineMode::kPeriodic;
  p.interval_ns = periodic ? run.period_ns : 0;
  p.wake = "e2e";
  for (const auto& r : rows) {
    p.histogram.Record(r.alert_ns - r.capture_ns);
    p.last_latency_ns = r.alert_ns - r.capture_ns;
  }
  p.per_period_unknown = true;
  p.misses_not_counted = run.deadline_ns <= 0;
  p.missed_activations = run.misses;
  p.skipped_periods = periodic ? run.dropped : 0;
  p.periods_elapsed = rows.size() + p.skipped_periods;
  if (p.misses_not_counted) {
    p.notes.push_back(fmt::format(
        "latency = Total (alert - capture) per frame; back to back without --deadline: no "
        "period and no deadline, so missed activations and skipped periods are not counted; "
        "lost frames {} are in e2e.json",
        run.lost));
  } else if (periodic) {
    p.notes.push_back(fmt::format(
        "latency = Total (alert - capture) per frame; missed activations = frames above the "
        "deadline ({}); skipped periods = dropped frames ({}: released, never processed, no "
        "Total, so no per-period statistics); lost frames {} are in e2e.json",
        run.misses, run.dropped, run.lost));
  } else {
    p.notes.push_back(fmt::format(
        "latency = Total (alert - capture) per frame; missed activations = frames above "
        "--deadline ({}); back to back: no period, so no skipped periods; lost frames {} are in "
        "e2e.json",
        run.misses, run.lost));
  }
  for (const auto& t : run.threads) {
    if (!t.as_asked) {
      p.degraded = true;
      p.notes.push_back(fmt::format("thread {} ({}, {}): {}", t.tid, t.name, t.role, t.note));
    }
  }
  return p;
}

}  // namespace

std::string E2eSourceRanOutNote(uint64_t recorded, uint64_t asked, uint64_t warmup) {
  return fmt::format(
      "the source ran out: {} of --frames {} frame(s) recorded (after {} warm-up frame(s)); "
      "loop it (,loop) for more",
      recorded, asked, warmup);
}

std::string ModelLabel(const std::string& model_path) {
  const std::string bytes = ReadWholeFile(model_path).value_or("");
  if (bytes.find(kE2eModelLabel) != std::string::npos) return kE2eModelLabel;
  return "as given (its training is not known to rtpulse)";
}

std::vector<results::E2eFrameRow> E2eRowsOf(const std::vector<e2e::FrameRecord>& frames) {
  std::vector<results::E2eFrameRow> rows;
  rows.reserve(frames.size());
  for (const auto& f : frames) {
    results::E2eFrameRow r;
    r.index = f.index;
    r.source_seq = f.source_seq;
    r.release_ns = f.release_ns;
    r.capture_ns = f.capture_ns;
    r.read_end_ns = f.read_end_ns;
    r.infer_start_ns = f.infer_start_ns;
    r.pre_end_ns = f.pre_end_ns;
    r.inference_end_ns = f.inference_end_ns;
    r.post_end_ns = f.post_end_ns;
    r.alert_ns = f.alert_ns;
    r.edge_ns = f.edge_ns;
    r.dropped_before = f.dropped_before;
    r.lost_before = f.lost_before;
    r.obstacle = f.obstacle;
    r.changed = f.changed;
    r.miss = f.miss;
    r.roi_depth_m = f.roi_depth_m;
    rows.push_back(r);
  }
  return rows;
}

e2e::PipelineStages E2eStagesOwned::View() {
  e2e::PipelineStages v;
  v.source = source.get();
  v.preprocess = &preprocess;
  v.inference = backend.get();
  v.postprocess = &postprocess;
  v.alert = alert.get();
  v.loopback = loopback.get();
  return v;
}

std::string E2eTimingOnlyNote(const std::string& source) {
  return fmt::format(
      "decision: timing only: --source {} gives no reference depths, so the network's relative "
      "depth has no scale to metres: every stage is timed, no ROI depth is known (frames.csv's "
      "roi_depth_m is empty) and no obstacle is decided or alerted; give --reference FILE "
      "(lines x,y,depth_m in source pixels) to decide on metric depth (docs/e2e.md, \"Timing "
      "only\")",
      source);
}

Expected<std::unique_ptr<E2eStagesOwned>> OpenE2eStages(const E2eSettings& settings, int threads) {
  auto owned = std::make_unique<E2eStagesOwned>();
  // A probe of the source reads one frame first: its size fixes the preprocessing's buffers,
  // and a source with references (synthetic) gives them. The run's own source is opened
  // afresh after it, so a video or a folder starts at its first frame.
  std::vector<e2e::ReferencePoint> source_refs;
  {
    auto probe = e2e::MakeSource(settings.source);
    if (!probe) return probe.error();
    if (Status s = (*probe)->Open(); !s) return s.error();
    e2e::CapturedFrame first;
    auto read = (*probe)->Read(first);
    if (!read) return read.error();
    if (!*read || first.image.empty()) {
      return UsageError(fmt::format("--source {}: no frame could be read from it ({})",
                                    settings.source.text, (*probe)->Describe()));
    }
    owned->source_width = first.image.width;
    owned->source_height = first.image.height;
    source_refs = (*probe)->References();
  }
  auto source = e2e::MakeSource(settings.source);
  if (!source) return source.error();
  owned->source = std::move(*source);
  if (Status s = owned->source->Open(); !s) return s.error();
  auto backend = e2e::MakeBackend(settings.backend);
  if (!backend) return backend.error();
  owned->backend = std::move(*backend);
  owned->backend->RequestInputSize(settings.input_width, settings.input_height);
  if (Status s = owned->backend->Load(settings.model_path, threads); !s) return s.error();
  if (Status s = owned->preprocess.Prepare(settings.preprocess, owned->source_width,
                                           owned->source_height, owned->backend->shape());
      !s) {
    return s.error();
  }
  const std::vector<e2e::ReferencePoint> refs =
      settings.reference_file.empty() ? source_refs : settings.references;
  if (refs.size() < 2 && !settings.reference_file.empty()) {
    return UsageError(fmt::format(
        "--reference {}: {} reference depth point(s); fitting the relative depth to metres "
        "needs 2 or more (lines x,y,depth_m in source pixels, at different depths)",
        settings.reference_file, refs.size()));
  }
  // A source without reference depths (a camera, a video) is timed, not decided on: there
  // is no scale from the network's relative depth to metres (E2eTimingOnlyNote).
  e2e::DecisionSpec decision = settings.decision;
  decision.timing_only = refs.size() < 2;
  owned->timing_only = decision.timing_only;
  if (Status s =
          owned->postprocess.Prepare(decision, owned->backend->shape(), owned->preprocess, refs);
      !s) {
    return s.error();
  }
  if (settings.alert.kind != e2e::AlertKind::kNone) {
    auto alert = e2e::OpenAlert(settings.alert);
    if (!alert) return alert.error();
    owned->alert = std::move(*alert);
  }
  if (!settings.loopback.empty()) {
    auto loopback = e2e::OpenLoopback(settings.loopback);
    if (!loopback) return loopback.error();
    owned->loopback = std::move(*loopback);
  }
  return owned;
}

std::optional<ThreadRecommendation> RecommendThreads(const std::vector<E2eOutcome>& outcomes,
                                                     bool loaded) {
  std::optional<ThreadRecommendation> best;
  ThreadRecommendation all;
  for (const auto& o : outcomes) {
    if (o.loaded != loaded || o.rows.empty()) continue;
    auto s = results::ComputeE2eStageStats(results::StageValues(o.rows, "Total"));
    if (!s) continue;
    all.p99_by_threads.emplace_back(o.threads, s->p99_ns);
    if (!best || s->p99_ns < best->p99_ns ||
        (s->p99_ns == best->p99_ns && o.threads < best->threads)) {
      best = ThreadRecommendation{o.threads, s->p99_ns, {}};
    }
  }
  if (best) best->p99_by_threads = all.p99_by_threads;
  return best;
}

E2eWorkload::E2eWorkload(E2eSettings settings, sys::SystemInfo info, std::string version,
                         std::string invocation)
    : settings_(std::move(settings)),
      info_(std::move(info)),
      version_(std::move(version)),
      invocation_(std::move(invocation)),
      known_workers_(settings_.precheck_workers) {
  notes_ = settings_.notes;
  if (ModelLabel(settings_.model_path) == kE2eModelLabel) {
    notes_.push_back(
        fmt::format("model {}: {} (its output is no depth; the timing is a depth "
                    "network's)",
                    settings_.model_path, kE2eModelLabel));
  }
}

nlohmann::json E2eWorkload::ConfigJson() const {
  nlohmann::json configurations = nlohmann::json::array();
  for (const auto& c : settings_.configurations) {
    configurations.push_back({{"scenario", c.scenario},
                              {"threads", c.threads},
                              {"loaded", c.loaded},
                              {"configuration", c.configuration}});
  }
  const e2e::PipelineSettings& p = settings_.pipeline;
  return {{"workload", "e2e"},
          {"policy", p.inference.policy},
          {"interval_us", p.fps > 0 ? static_cast<int64_t>(1e6 / p.fps) : 0},
          {"mode", E2eModeName(p.mode)},
          {"fps", p.fps},
          {"deadline_ns", E2eDeadlineNs(p)},
          {"frames", p.frames},
          {"warmup_frames", p.warmup_frames},
          {"source", settings_.source.text},
          {"model", settings_.model_path},
          {"backend", e2e::BackendKindName(settings_.backend)},
          {"latency_quantity", "Total = alert - capture of every frame"},
          {"configurations", configurations},
          {"loads", settings_.load_specs}};
}

namespace {

/// Runs the pipeline on its own thread while this one takes SIGINT/SIGTERM (which stop it)
/// and shows the frames recorded so far about every 100 ms.
Expected<e2e::PipelineResult> RunPipelineWatched(const e2e::PipelineSettings& pipeline,
                                                 e2e::PipelineStages view, Progress& progress) {
  const int64_t start_ns = MonotonicNs();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> recorded{0};
  std::atomic<bool> done{false};
  std::optional<Expected<e2e::PipelineResult>> result;
  std::thread runner([&] {
    result.emplace(e2e::RunPipeline(pipeline, view, stop, [&](uint64_t n) { recorded.store(n); }));
    done.store(true, std::memory_order_release);
  });
  while (!done.load(std::memory_order_acquire)) {
    if (StopSignalWithin(100 * kNsPerMs)) stop.store(true);
    if (progress.WantsTicks()) {
      LiveStatus s;
      s.elapsed_ns = MonotonicNs() - start_ns;
      s.samples = recorded.load();
      progress.Measuring(s);
    }
  }
  runner.join();
  return std::move(*result);
}

/// "1x3x256x256"-style input and output shapes of the backend's model.
std::pair<std::string, std::string> ModelShapes(const e2e::ModelShape& shape) {
  return {e2e::FormatShape({1, shape.in_channels, shape.in_height, shape.in_width}),
          e2e::FormatShape({1, shape.out_channels, shape.out_height, shape.out_width})};
}

/// The scenario's facts for e2e_statistics.txt and the summary: counts, times, what ran
/// (source, model, backend and its threads) and every note of the run.
results::E2eRunFacts E2eFactsOf(const std::string& name, const E2eConfiguration& config,
                                const E2eSettings& settings, const e2e::PipelineResult& run,
                                const E2eStagesOwned& stages, size_t rows,
                                const std::vector<std::string>& notes) {
  results::E2eRunFacts facts;
  facts.scenario = name;
  facts.configuration = config.configuration;
  facts.mode = E2eModeName(settings.pipeline.mode);
  facts.fps = settings.pipeline.fps;
  facts.deadline_ns = run.deadline_ns;
  facts.released = run.released;
  facts.dropped = run.dropped;
  facts.lost = run.lost;
  facts.misses = run.misses;
  facts.loopback_timeouts = run.loopback_timeouts;
  facts.start_ns = run.start_ns;
  facts.end_ns = run.end_ns;
  facts.backend_name = stages.backend->name();
  facts.backend_why = stages.backend->why();
  facts.threads_asked = config.threads;
  facts.backend_threads = stages.backend->threads();
  facts.workers_seen = run.workers_seen;
  facts.source = stages.source->Describe();
  facts.timestamp_source = std::string(e2e::TimestampSourceName(stages.source->timestamp_source()));
  const auto [in_shape, out_shape] = ModelShapes(stages.backend->shape());
  facts.model = fmt::format("{} ({} -> {}, {})", settings.model_path, in_shape, out_shape,
                            ModelLabel(settings.model_path));
  facts.interrupted = run.interrupted;
  facts.source_ended = run.source_ended;
  facts.notes = notes;
  for (const auto& n : run.notes) facts.notes.push_back(n);
  if (!run.error.empty()) facts.notes.push_back("the run stopped early: " + run.error);
  if (run.source_ended && rows < settings.pipeline.frames) {
    facts.notes.push_back(
        E2eSourceRanOutNote(rows, settings.pipeline.frames, settings.pipeline.warmup_frames));
  }
  for (const auto& t : run.threads) {
    if (!t.as_asked)
      facts.notes.push_back(fmt::format("thread {} ({}): {}", t.name, t.role, t.note));
  }
  return facts;
}

/// e2e.json's settings block: the pipeline, its threads' scheduling, crop, decision, alert.
results::E2eFile::Settings E2eFileSettingsOf(const E2eConfiguration& config,
                                             const E2eSettings& settings,
                                             const e2e::PipelineResult& run,
                                             const results::E2eRunFacts& facts) {
  const e2e::PipelineSettings& p = settings.pipeline;
  results::E2eFile::Settings fs;
  fs.mode = facts.mode;
  fs.fps = p.fps;
  fs.deadline_ns = facts.deadline_ns;
  fs.period_ns = run.period_ns;
  fs.frames = p.frames;
  fs.warmup_frames = p.warmup_frames;
  fs.capture = {p.capture.policy, p.capture.priority, p.capture.cpus};
  fs.inference = {p.inference.policy, p.inference.priority, p.inference.cpus};
  const auto& crop = settings.preprocess.crop;
  const auto& roi = settings.decision.roi;
  fs.crop = {crop.x0, crop.y0, crop.x1, crop.y1};
  fs.roi = {roi.x0, roi.y0, roi.x1, roi.y1};
  fs.near_m = settings.decision.near_m;
  fs.clear_m = settings.decision.clear_m;
  fs.alert = settings.alert.text.empty() ? "none" : settings.alert.text;
  if (!settings.loopback.empty()) fs.loopback = settings.loopback;
  fs.loaded = config.loaded;
  if (config.loaded) fs.loads = settings.load_specs;
  return fs;
}

/// The scenario's e2e.json (results::E2eFile).
results::E2eFile E2eFileOf(const std::string& name, const E2eConfiguration& config,
                           const E2eSettings& settings, const e2e::PipelineResult& run,
                           const E2eStagesOwned& stages, const results::E2eRunFacts& facts,
                           const std::vector<results::E2eFrameRow>& rows) {
  results::E2eFile file;
  file.scenario = name;
  file.configuration = config.configuration;
  file.source = {settings.source.text,
                 facts.source,
                 facts.timestamp_source,
                 stages.source_width,
                 stages.source_height,
                 settings.reference_file.empty() ? "the source's own" : settings.reference_file};
  const auto [in_shape, out_shape] = ModelShapes(stages.backend->shape());
  file.model = {settings.model_path, in_shape, out_shape, ModelLabel(settings.model_path)};
  file.backend.kind = e2e::BackendKindName(settings.backend);
  file.backend.name = facts.backend_name;
  file.backend.why = facts.backend_why;
  file.backend.threads_asked = config.threads;
  if (facts.backend_threads >= 0) {
    file.backend.threads = facts.backend_threads;
    file.backend.threads_from = "the backend";
  } else if (facts.workers_seen >= 0) {
    file.backend.threads = facts.workers_seen + 1;
    file.backend.threads_from = "/proc/self/task: the inference thread and the backend's workers";
  } else {
    file.backend.threads_from = "not known";
  }
  file.settings = E2eFileSettingsOf(config, settings, run, facts);
  for (const auto& t : run.threads) {
    file.threads.push_back(
        {t.tid, t.name, t.role, t.policy, t.priority, t.cpus, t.as_asked, t.note});
  }
  const uint64_t frames = settings.pipeline.frames;
  file.counts = {rows.size(),
                 frames,
                 run.source_ended && rows.size() < frames,
                 run.released,
                 run.dropped,
                 run.lost,
                 run.misses,
                 run.loopback_timeouts,
                 run.ThroughputFps(),
                 run.start_ns,
                 run.end_ns,
                 run.interrupted,
                 run.source_ended};
  for (const char* stage : results::kE2eStageNames) {
    auto st = results::ComputeE2eStageStats(results::StageValues(rows, stage));
    file.stages[stage] = st ? std::optional<results::E2eStageStats>(*st) : std::nullopt;
  }
  file.latency_quantity = "Total = alert - capture (result.json's latency of this scenario)";
  file.notes = facts.notes;
  return file;
}

}  // namespace

Expected<Measured> E2eWorkload::Measure(
    const std::string& dir, const std::string& name, int64_t /*duration_ns*/,
    int64_t /*checkpoint_ns*/,
    const std::function<void(const results::LatencyRun&)>& /*checkpoint*/, Progress& progress) {
  const auto found = std::find_if(settings_.configurations.begin(), settings_.configurations.end(),
                                  [&](const E2eConfiguration& c) { return c.scenario == name; });
  if (found == settings_.configurations.end()) {
    return Failure(fmt::format("no e2e configuration for scenario '{}'", name));
  }
  const E2eConfiguration& config = *found;
  // The threads before the process's first backend Load: every thread there now except the
  // backend workers known so far (the CLI's precheck Load made some, and each earlier
  // scenario's check found the rest). OpenCV's pool is process-wide and outlives a backend,
  // so a worker made for an earlier scenario serves this one too and must stay a worker;
  // threads started since (the suite's monitor, in-process loads) stay out.
  std::vector<int> before = e2e::ListProcessThreads();
  std::erase_if(before, [&](int tid) {
    return std::find(known_workers_.begin(), known_workers_.end(), tid) != known_workers_.end();
  });
  auto stages = OpenE2eStages(settings_, config.threads);
  if (!stages) return stages.error();
  e2e::PipelineSettings pipeline = settings_.pipeline;
  pipeline.threads_before_backend = before;

  const int64_t start_realtime_ns = ClockNs(CLOCK_REALTIME);
  auto result = RunPipelineWatched(pipeline, (*stages)->View(), progress);
  if (!result) return result.error();
  const e2e::PipelineResult& run = *result;

  for (const auto& t : run.threads) {
    if (t.role == "worker" &&
        std::find(known_workers_.begin(), known_workers_.end(), t.tid) == known_workers_.end()) {
      known_workers_.push_back(t.tid);
    }
  }

  E2eOutcome outcome;
  outcome.scenario = name;
  outcome.configuration = config.configuration;
  outcome.threads = config.threads;
  outcome.loaded = config.loaded;
  outcome.rows = E2eRowsOf(run.frames);
  outcome.interrupted = run.interrupted;
  outcome.facts = E2eFactsOf(name, config, settings_, run, **stages, outcome.rows.size(), notes_);

  Measured out;
  out.interrupted = run.interrupted;
  const auto keep = [&](const Status& s) {
    if (!s) out.warnings.push_back(s.error().message);
  };
  keep(results::WriteE2eLatencyCsv(dir + "/e2e_inference_latency.csv", outcome.rows));
  keep(results::WriteFrameLog(dir + "/frames.csv", outcome.rows));
  keep(results::WriteE2eStatistics(dir + "/e2e_statistics.txt", outcome.rows, outcome.facts));
  if (Status s =
          WriteE2eSamples(dir + "/samples.bin", outcome.rows, start_realtime_ns, run.interrupted);
      s) {
    out.samples_file = name + "/samples.bin";
  } else {
    out.warnings.push_back("no samples.bin: " + s.error().message);
  }
  const results::E2eFile file =
      E2eFileOf(name, config, settings_, run, **stages, outcome.facts, outcome.rows);
  keep(WriteFileAtomic(dir + "/e2e.json", results::ToJson(file).dump(2) + "\n"));

  results::LatencyRun& m = out.latency;
  m.rtpulse_version = version_;
  m.cmdline = invocation_;
  FillSystem(info_, m);
  m.start_realtime_ns = start_realtime_ns;
  m.end_realtime_ns = ClockNs(CLOCK_REALTIME);
  m.interrupted = run.interrupted;
  results::PathRun path;
  path.wake = "e2e";
  path.start_realtime_ns = m.start_realtime_ns;
  path.end_realtime_ns = m.end_realtime_ns;
  path.duration_ns = run.end_ns - run.start_ns;
  path.probes.push_back(E2eTotalProbe(outcome.rows, run, settings_));
  m.degraded = path.probes.front().degraded;
  m.paths.push_back(std::move(path));
  if (!out.samples_file.empty() && !outcome.rows.empty()) {
    // Per wake-up only, as before: e2e's summary takes no per-period values from the log.
    AddExactPercentiles(dir + "/samples.bin", false, out);
  }
  if (outcome.rows.empty()) out.warnings.push_back(name + ": no frame was recorded");
  outcomes_.push_back(std::move(outcome));
  if (!run.error.empty()) {
    // The frames before the failure are in the scenario's files; the scenario itself failed.
    return Failure(fmt::format("{} ({} frames recorded before it are in {}/frames.csv)", run.error,
                               run.frames.size(), name));
  }
  return out;
}

}  // namespace rtpulse::suite
