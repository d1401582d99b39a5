// rtpulse e2e: the perception-to-actuation pipeline, source -> preprocess -> inference ->
// postprocess -> decision -> alert, timed per frame (docs/e2e.md). Options become a suite plan
// whose scenarios are the configurations (inference threads, loads or not) and a
// suite::E2eWorkload; the suite runner runs them. This file parses, checks and prints.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "cli/command.h"
#include "cli/live_view.h"
#include "cli/scenario_progress.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/command_runner.h"
#include "core/cpus.h"
#include "core/exit_code.h"
#include "core/fs_root.h"
#include "core/parse.h"
#include "core/printable.h"
#include "core/timestamp.h"
#include "core/version.h"
#include "e2e/actuation.h"
#include "e2e/frame_source.h"
#include "e2e/inference.h"
#include "e2e/pipeline.h"
#include "e2e/processing.h"
#include "e2e/worker_threads.h"
#include "load/spec.h"
#include "measure/engine.h"
#include "report/e2e_figures.h"
#include "results/cyclictest_format.h"
#include "results/e2e_result.h"
#include "suite/e2e_workload.h"
#include "suite/runner.h"
#include "suite/services.h"
#include "sys/check.h"
#include "sys/process_facts.h"
#include "sys/system_info.h"

namespace rtpulse::cli {
namespace {

struct E2eOptions {
  std::string source = "synthetic";
  std::string model;
  std::string backend;
  int threads = 1;
  bool threads_given = false;
  int64_t frames = 1000;
  int64_t warmup = 10;
  std::string fps;
  std::string deadline;
  std::string reference;
  std::string crop;
  std::string roi;
  std::optional<double> near_m;
  std::optional<double> clear_m;
  std::string alert = "none";
  std::string loopback;
  std::string capture_policy = "other";
  std::string capture_cpus;
  std::string inference_policy = "other";
  std::string inference_cpus;
  std::vector<std::string> load;
  std::string sweep;
  std::string out;
  std::string csv;
  std::string json;
  bool quiet = false;
  // The numeric options as given: parsed by ParseE2eNumbers, so that a value that is no
  // number is one line naming the option and an example, as the other commands say it.
  std::string threads_text;
  std::string frames_text;
  std::string warmup_text;
  std::string near_text;
  std::string clear_text;
};

Status ParseE2eNumbers(E2eOptions& o) {
  const auto whole = [](const char* option, const std::string& text, const char* example,
                        auto& out) -> Status {
    if (text.empty()) return {};
    auto v = ParseSignedInt(text, option);
    if (!v) {
      return UsageError(fmt::format("{} '{}' is not a whole number: give e.g. {} {}", option,
                                    Printable(text), option, example));
    }
    out = static_cast<std::remove_reference_t<decltype(out)>>(*v);
    return {};
  };
  const auto metres = [](const char* option, const std::string& text,
                         std::optional<double>& out) -> Status {
    if (text.empty()) return {};
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() ||
        text.find_first_of("0123456789") == std::string::npos) {
      return UsageError(
          fmt::format("{} '{}' is not a number: give a distance in metres, e.g. {} 1.0", option,
                      Printable(text), option));
    }
    out = v;
    return {};
  };
  if (Status s = whole("--threads", o.threads_text, "2", o.threads); !s) return s;
  if (Status s = whole("--frames", o.frames_text, "1000", o.frames); !s) return s;
  if (Status s = whole("--warmup", o.warmup_text, "10", o.warmup); !s) return s;
  if (Status s = metres("--near", o.near_text, o.near_m); !s) return s;
  return metres("--clear", o.clear_text, o.clear_m);
}

/// The generated default model: beside the binary in the build tree (build/src/rtpulse ->
/// build/models), or in the installed share folder (PREFIX/bin/rtpulse ->
/// PREFIX/share/rtpulse/models). Every place looked at is named when none has it.
Expected<std::string> E2eDefaultModelPath() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::filesystem::path> candidates;
  if (!ec) {
    const auto dir = exe.parent_path();
    candidates = {dir.parent_path() / "models", dir / "models",
                  dir.parent_path() / "share" / "rtpulse" / "models"};
  }
  candidates.emplace_back("/usr/share/rtpulse/models");
  std::string looked;
  for (const auto& c : candidates) {
    const auto file = c / "depth-default.onnx";
    if (std::filesystem::is_regular_file(file, ec)) return file.string();
    looked += (looked.empty() ? "" : ", ") + file.string();
  }
  return ResourceError(fmt::format(
      "no default model (looked for {}): build rtpulse with the model generator (apt-get "
      "install python3-numpy python3-onnx python3-flatbuffers) or give --model FILE",
      looked));
}

Expected<int64_t> E2eTime(const std::string& option, const std::string& text) {
  const bool bare = !text.empty() && text.find_first_not_of("0123456789.") == std::string::npos;
  if (bare) {
    return UsageError(fmt::format("{} '{}' needs a unit: e.g. {}ms, {}us or {}s", option, text,
                                  text, text, text));
  }
  auto ns = ParseTimeNs(text, kNsPerSec);
  if (!ns) return UsageError(fmt::format("{}: {}", option, ns.error().message));
  if (*ns <= 0) {
    return UsageError(fmt::format("{} '{}' must be greater than 0 (e.g. 100ms)", option, text));
  }
  return *ns;
}

/// --capture-policy / --inference-policy: other, fifo:PRIO or rr:PRIO (1..99).
Status ParseE2eThreadPolicy(const std::string& option, const std::string& text,
                            e2e::ThreadSpec& spec) {
  if (text == "other") {
    spec.policy = "other";
    spec.priority = 0;
    return {};
  }
  const auto colon = text.find(':');
  const std::string name = text.substr(0, colon);
  if ((name != "fifo" && name != "rr") || colon == std::string::npos) {
    return UsageError(fmt::format(
        "{} '{}': give other, fifo:PRIO or rr:PRIO with PRIO 1..99 (e.g. fifo:80)", option, text));
  }
  auto prio = ParseInt(text.substr(colon + 1), option + " priority");
  if (!prio || *prio < 1 || *prio > 99) {
    return UsageError(
        fmt::format("{} '{}': the priority must be 1..99 (e.g. {}:80)", option, text, name));
  }
  spec.policy = name;
  spec.priority = static_cast<int>(*prio);
  return {};
}

Status ParseE2eThreadCpus(const std::string& option, const std::string& text,
                          const std::vector<int>& online, e2e::ThreadSpec& spec) {
  if (text.empty()) return {};
  auto cpus = ParseCpuList(text);
  if (!cpus) return UsageError(fmt::format("{}: {}", option, cpus.error().message));
  for (const int cpu : *cpus) {
    if (std::find(online.begin(), online.end(), cpu) == online.end()) {
      return UsageError(fmt::format("{} '{}': CPU {} is not online (online: {}); pick from those",
                                    option, text, cpu, FormatCpuList(online)));
    }
  }
  spec.cpus = *cpus;
  return {};
}

/// Everything checked and decided before anything is started or written.
struct E2ePlan {
  suite::SuitePlan suite;
  suite::E2eSettings settings;
  bool sweep = false;
};

Status BuildE2ePipeline(const E2eOptions& o, const std::vector<int>& online,
                        suite::E2eSettings& s) {
  e2e::PipelineSettings& p = s.pipeline;
  if (o.frames < 1 || o.frames > 10'000'000) {
    return UsageError(
        fmt::format("--frames {}: give 1..10000000 frames per scenario (default 1000)", o.frames));
  }
  if (o.warmup < 0 || o.warmup > 100'000) {
    return UsageError(fmt::format(
        "--warmup {}: give 0..100000 frames run before recording (default 10)", o.warmup));
  }
  p.frames = static_cast<uint64_t>(o.frames);
  p.warmup_frames = static_cast<uint64_t>(o.warmup);
  if (!o.fps.empty()) {
    char* end = nullptr;
    const double fps = std::strtod(o.fps.c_str(), &end);
    if (end != o.fps.c_str() + o.fps.size() || !std::isfinite(fps) || fps <= 0 || fps > 10000) {
      return UsageError(fmt::format(
          "--fps '{}': give a frame rate above 0 and at most 10000 frames/s (e.g. 10)", o.fps));
    }
    p.mode = e2e::PipelineMode::kPeriodic;
    p.fps = fps;
  }
  if (!o.deadline.empty()) {
    auto d = E2eTime("--deadline", o.deadline);
    if (!d) return d.error();
    p.deadline_ns = *d;
  } else if (p.mode == e2e::PipelineMode::kPeriodic) {
    p.deadline_ns = static_cast<int64_t>(std::llround(1e9 / p.fps));
  }
  if (Status st = ParseE2eThreadPolicy("--capture-policy", o.capture_policy, p.capture); !st) {
    return st;
  }
  if (Status st = ParseE2eThreadPolicy("--inference-policy", o.inference_policy, p.inference);
      !st) {
    return st;
  }
  if (Status st = ParseE2eThreadCpus("--capture-cpus", o.capture_cpus, online, p.capture); !st) {
    return st;
  }
  return ParseE2eThreadCpus("--inference-cpus", o.inference_cpus, online, p.inference);
}

Status BuildE2eStages(const E2eOptions& o, suite::E2eSettings& s) {
  auto source = e2e::ParseSourceSpec(o.source);
  if (!source) return source.error();
  s.source = *source;
  if (o.model.empty()) {
    // A lean build has no backend for the default model either: say which packages first.
    if (!e2e::BackendCompiledIn(e2e::BackendKind::kOpenCv)) {
      auto made = e2e::MakeBackend(e2e::BackendKind::kOpenCv);
      if (!made) return made.error();
    }
    auto model = E2eDefaultModelPath();
    if (!model) return model.error();
    s.model_path = *model;
  } else {
    s.model_path = o.model;
  }
  if (Status st = e2e::CheckModelFile(s.model_path); !st) {
    return Error{st.error().code, "--model: " + st.error().message};
  }
  auto backend =
      o.backend.empty() ? e2e::BackendForModel(s.model_path) : e2e::ParseBackendKind(o.backend);
  if (!backend) return backend.error();
  s.backend = *backend;
  auto natural = e2e::BackendForModel(s.model_path);
  if (natural && *natural != s.backend) {
    return UsageError(fmt::format(
        "--backend {} cannot run {} (a {} model): give --backend {} or a {} model",
        e2e::BackendKindName(s.backend), s.model_path,
        *natural == e2e::BackendKind::kOpenCv ? ".onnx" : ".tflite", e2e::BackendKindName(*natural),
        s.backend == e2e::BackendKind::kOpenCv ? ".onnx" : ".tflite"));
  }
  if (!e2e::BackendCompiledIn(s.backend)) {
    auto made = e2e::MakeBackend(s.backend);  // its resource error names the packages
    if (!made) return made.error();
  }
  if (!o.reference.empty()) {
    auto refs = e2e::ReadReferenceFile(o.reference);
    if (!refs) return refs.error();
    s.reference_file = o.reference;
    s.references = *refs;
  }
  if (!o.crop.empty()) {
    auto crop = e2e::ParseFracRect("--crop", o.crop);
    if (!crop) return crop.error();
    s.preprocess.crop = *crop;
  }
  if (!o.roi.empty()) {
    auto roi = e2e::ParseFracRect("--roi", o.roi);
    if (!roi) return roi.error();
    s.decision.roi = *roi;
  }
  if (o.near_m) {
    if (!std::isfinite(*o.near_m) || *o.near_m <= 0) {
      return UsageError(
          fmt::format("--near {}: give a distance in metres above 0 (e.g. 1.0)", *o.near_m));
    }
    s.decision.near_m = *o.near_m;
    if (!o.clear_m) s.decision.clear_m = std::max(s.decision.clear_m, *o.near_m * 1.25);
  }
  if (o.clear_m) {
    if (!std::isfinite(*o.clear_m) || *o.clear_m < s.decision.near_m) {
      return UsageError(fmt::format(
          "--clear {}: give a distance in metres at least --near ({}): clear again only above "
          "it (hysteresis)",
          *o.clear_m, s.decision.near_m));
    }
    s.decision.clear_m = *o.clear_m;
  }
  auto alert = e2e::ParseAlertSpec(o.alert);
  if (!alert) return alert.error();
  s.alert = *alert;
  if (!o.loopback.empty()) {
    if (!o.loopback.starts_with("gpio:")) {
      return UsageError(fmt::format(
          "--loopback '{}': give gpio:CHIP:LINE, the input wired to the alert line", o.loopback));
    }
    if (s.alert.kind != e2e::AlertKind::kGpio) {
      return UsageError(
          "--loopback needs --alert gpio:CHIP:LINE: the loopback input sees the alert line's "
          "edges");
    }
    s.loopback = o.loopback;
  }
  return {};
}

/// The configurations: one thread count (--threads) or 1..N (--sweep threads), each plain,
/// and loaded too when --load is given.
Status BuildE2eConfigurations(const E2eOptions& o, const std::vector<int>& online, E2ePlan& plan) {
  suite::E2eSettings& s = plan.settings;
  std::vector<int> counts;
  if (o.sweep.empty()) {
    if (Status st = e2e::CheckThreads(o.threads); !st) return st;
    counts = {o.threads};
  } else if (o.sweep == "threads") {
    if (o.threads_given) {
      return UsageError(
          "--sweep threads tries 1..N threads itself (N: the --inference-cpus or online CPUs): "
          "drop --threads");
    }
    const size_t n =
        s.pipeline.inference.cpus.empty() ? online.size() : s.pipeline.inference.cpus.size();
    for (size_t i = 1; i <= std::max<size_t>(1, n); ++i) counts.push_back(static_cast<int>(i));
    plan.sweep = true;
  } else {
    return UsageError(fmt::format("--sweep '{}': the only sweep is 'threads'", o.sweep));
  }
  for (const int threads : counts) {
    for (const bool loaded : {false, true}) {
      if (loaded && o.load.empty()) continue;
      suite::E2eConfiguration c;
      c.threads = threads;
      c.loaded = loaded;
      c.scenario = plan.sweep ? fmt::format("threads-{}", threads) : std::string("baseline");
      if (loaded) c.scenario = plan.sweep ? c.scenario + "-loaded" : "loaded";
      c.configuration = fmt::format("threads {}, {}", threads, loaded ? "loaded" : "no load");
      s.configurations.push_back(c);
    }
  }
  return {};
}

Status BuildE2eSuite(const E2eOptions& o, const std::vector<int>& online, E2ePlan& plan) {
  suite::SuitePlan& p = plan.suite;
  p.online = online;
  p.cpus = plan.settings.pipeline.inference.cpus;
  std::vector<load::LoadSpec> loads;
  if (!o.load.empty()) {
    auto parsed = load::ParseLoadSpecs(o.load);
    if (!parsed) return parsed.error();
    loads = std::move(*parsed);
    for (const auto& l : loads) plan.settings.load_specs.push_back(l.text);
  }
  suite::SuiteConfig& c = p.config;
  c.name = "e2e";
  c.source = "rtpulse e2e";
  c.description = "the perception-to-actuation pipeline";
  const e2e::PipelineSettings& ps = plan.settings.pipeline;
  c.duration_ns = ps.mode == e2e::PipelineMode::kPeriodic
                      ? static_cast<int64_t>(static_cast<double>(ps.frames) * 1e9 / ps.fps)
                      : 0;
  c.settle_ns = 0;
  c.interval_ns = ps.deadline_ns;
  c.monitor_interval_ns = kNsPerSec;
  for (const auto& config : plan.settings.configurations) {
    suite::Scenario s;
    s.name = config.scenario;
    s.description = config.configuration;
    if (config.loaded) {
      s.loads = loads;
      s.load_specs = plan.settings.load_specs;
      s.settle_ns = kNsPerSec;
    }
    c.scenarios.push_back(std::move(s));
  }
  p.invocation = Invocation();
  p.version = kVersion;
  p.out_dir = o.out.empty() ? "rtpulse_e2e_" + RunFolderStamp() : o.out;
  return CheckOutputFolder(p.out_dir);
}

Expected<E2ePlan> BuildE2ePlan(const E2eOptions& o) {
  E2ePlan plan;
  const std::vector<int> online = OnlineCpus(FsRoot::System());
  if (online.empty()) return ResourceError("no online CPU found (/sys/devices/system/cpu/online)");
  if (Status s = BuildE2ePipeline(o, online, plan.settings); !s) return s.error();
  if (Status s = BuildE2eStages(o, plan.settings); !s) return s.error();
  if (Status s = BuildE2eConfigurations(o, online, plan); !s) return s.error();
  if (Status s = BuildE2eSuite(o, online, plan); !s) return s.error();
  if (o.csv == "-") {
    return UsageError(
        "--csv -: the seed's CSV goes to a file, not to standard output (which has the "
        "summary); give --csv FILE (every scenario's is in the results folder too, "
        "SCENARIO/e2e_inference_latency.csv)");
  }
  if (o.json == "-" && plan.settings.alert.kind == e2e::AlertKind::kStdout) {
    return UsageError(
        "--alert stdout with --json -: both write to standard output, and the alert lines "
        "would break the JSON; give --json FILE or --alert file:PATH");
  }
  for (const auto& [option, path] : {std::pair{"--json", o.json}, std::pair{"--csv", o.csv}}) {
    if (path.empty() || path == "-") continue;
    if (Status s = CheckWritable(path); !s) {
      return Error{s.error().code, std::string(option) + ": " + s.error().message};
    }
  }
  // The threads' scheduling tried once on a short-lived thread: a policy the kernel refuses
  // (no CAP_SYS_NICE) is the resource error before anything starts.
  for (const auto& [spec, policy, cpus] :
       {std::tuple{plan.settings.pipeline.capture, "--capture-policy", "--capture-cpus"},
        std::tuple{plan.settings.pipeline.inference, "--inference-policy", "--inference-cpus"}}) {
    if (Status s = e2e::CheckThreadSpec(spec, policy); !s) return s.error();
    Status applied;
    std::thread probe([&, spec = spec, policy = policy, cpus = cpus] {
      applied = e2e::ApplySpecToThisThread(spec, policy, cpus);
    });
    probe.join();
    if (!applied) return applied.error();
  }
  // Every stage opened once here, so a missing file, a busy GPIO line or a wrong-shaped model
  // is said before anything starts or is written; they are closed again before the run.
  const std::vector<int> threads_before = e2e::ListProcessThreads();
  auto stages = suite::OpenE2eStages(plan.settings, plan.settings.configurations.front().threads);
  if (!stages) return stages.error();
  for (const int tid : e2e::ListProcessThreads()) {
    if (std::find(threads_before.begin(), threads_before.end(), tid) == threads_before.end()) {
      plan.settings.precheck_workers.push_back(tid);
    }
  }
  // A finite source (a video or a folder without ,loop) that the warm-up would use up: said
  // here, before anything is written, from the frames it has (read up to --warmup + 1).
  const e2e::SourceSpec& spec = plan.settings.source;
  if ((spec.kind == e2e::SourceKind::kVideo || spec.kind == e2e::SourceKind::kImages) &&
      !spec.loop) {
    const uint64_t needed = plan.settings.pipeline.warmup_frames + 1;
    uint64_t frames = 0;
    e2e::CapturedFrame frame;
    while (frames < needed) {
      auto read = (*stages)->source->Read(frame);
      if (!read) return read.error();
      if (!*read) break;
      ++frames;
    }
    if (frames < needed) {
      return UsageError(fmt::format(
          "--source {} has {} frame(s) and --warmup {} runs {} before recording: nothing would "
          "be recorded; give --warmup {} or less, or loop the source (--source {},loop)",
          spec.text, frames, o.warmup, o.warmup, frames == 0 ? 0 : frames - 1, spec.text));
    }
  }
  return plan;
}

class E2eProgress final : public ScenarioProgress {
 public:
  using ScenarioProgress::ScenarioProgress;

 protected:
  std::string SettlingLine(int64_t left_ns) const override {
    return fmt::format("[{}/{}] {}: loads settling, {} left", index_ + 1, count_, name_,
                       suite::FormatClock(left_ns));
  }
  std::string MeasuringLine(const suite::LiveStatus& s) const override {
    return fmt::format("[{}/{}] {}: frames {}  elapsed {}", index_ + 1, count_, name_, s.samples,
                       suite::FormatClock(s.elapsed_ns));
  }
};

/// The summary table and the JSON document of the run.
nlohmann::json PrintE2eSummary(const suite::E2eWorkload& workload, bool sweep, std::FILE* text) {
  nlohmann::json doc = {{"scenarios", nlohmann::json::array()}};
  std::vector<std::string> ran_out_lines;
  fmt::print(text, "{:<20} {:>7} {:>12} {:>12} {:>12} {:>8} {:>8} {:>10}\n", "scenario", "frames",
             "p50 Total", "p99 Total", "max Total", "misses", "dropped", "frames/s");
  for (const auto& o : workload.outcomes()) {
    auto st = results::ComputeE2eStageStats(results::StageValues(o.rows, "Total"));
    const std::optional<double> fps = results::E2eThroughputFps(o.rows);
    if (st) {
      const std::string p99 = results::E2ePercentileText(st->p99_ns, 99, st->count);
      fmt::print(text, "{:<20} {:>7} {:>9} ms {:>12} {:>9} ms {:>8} {:>8} {:>10}\n", o.scenario,
                 o.rows.size(), results::E2eMsText(st->p50_ns), p99 == "n/a" ? p99 : p99 + " ms",
                 results::E2eMsText(st->max_ns),
                 o.facts.deadline_ns > 0 ? std::to_string(o.facts.misses) : std::string("-"),
                 o.facts.dropped, fps ? fmt::format("{:.3f}", *fps) : std::string("n/a"));
    } else {
      fmt::print(text, "{:<20} {:>7} (no frame recorded)\n", o.scenario, 0);
    }
    const bool ran_out = o.facts.source_ended && o.rows.size() < workload.frames_asked();
    doc["scenarios"].push_back(
        {{"scenario", o.scenario},
         {"configuration", o.configuration},
         {"threads", o.threads},
         {"loaded", o.loaded},
         {"frames", o.rows.size()},
         {"p50_total_ns", st ? nlohmann::json(st->p50_ns) : nlohmann::json(nullptr)},
         {"p99_total_ns", st ? nlohmann::json(st->p99_ns) : nlohmann::json(nullptr)},
         {"max_total_ns", st ? nlohmann::json(st->max_ns) : nlohmann::json(nullptr)},
         {"misses",
          o.facts.deadline_ns > 0 ? nlohmann::json(o.facts.misses) : nlohmann::json(nullptr)},
         {"dropped", o.facts.dropped},
         {"lost", o.facts.lost},
         {"throughput_fps", fps ? nlohmann::json(*fps) : nlohmann::json(nullptr)},
         {"interrupted", o.interrupted},
         {"source_ran_out", ran_out},
         {"backend", o.facts.backend_name}});
    if (ran_out) {
      ran_out_lines.push_back(
          fmt::format("{}: {}", o.scenario,
                      suite::E2eSourceRanOutNote(o.rows.size(), workload.frames_asked(),
                                                 workload.warmup_frames())));
    }
  }
  for (const auto& line : ran_out_lines) fmt::print(text, "{}\n", line);
  if (sweep) {
    nlohmann::json recs = nlohmann::json::array();
    for (const bool loaded : {false, true}) {
      auto r = suite::RecommendThreads(workload.outcomes(), loaded);
      if (!r) continue;
      std::string all;
      nlohmann::json p99 = nlohmann::json::object();
      for (const auto& [threads, ns] : r->p99_by_threads) {
        all += fmt::format("{}{}: {} ms", all.empty() ? "" : ", ", threads, results::E2eMsText(ns));
        p99[std::to_string(threads)] = ns;
      }
      fmt::print(text,
                 "recommendation{}: {} inference thread{} (lowest p99 Total, {} ms; p99 by "
                 "threads: {})\n",
                 loaded ? " under load" : "", r->threads, r->threads == 1 ? "" : "s",
                 results::E2eMsText(r->p99_ns), all);
      recs.push_back({{"loaded", loaded},
                      {"threads", r->threads},
                      {"p99_total_ns", r->p99_ns},
                      {"p99_total_ns_by_threads", p99}});
    }
    doc["recommendation"] = recs;
  }
  return doc;
}

void WriteE2eFiguresOf(const std::string& run_dir, const suite::E2eWorkload& workload,
                       nlohmann::json& doc, std::FILE* text) {
  std::vector<report::E2eFigureInput> inputs;
  for (const auto& o : workload.outcomes()) inputs.push_back({o.scenario, o.rows});
  std::vector<std::string> notes;
  if (Status s = report::WriteE2eFigures(run_dir, inputs, {}, &notes); !s) {
    notes.push_back("figures not written: " + s.error().message);
  }
  for (const auto& n : notes) fmt::print(text, "note: {}\n", n);
  doc["figure_notes"] = notes;
}

Status WriteE2eJson(const std::string& path, const nlohmann::json& doc) {
  if (path.empty()) return {};
  if (path == "-") {
    std::fputs((doc.dump(2) + "\n").c_str(), stdout);
    return {};
  }
  return WriteFileAtomic(path, doc.dump(2) + "\n");
}

int RunE2e(const E2eOptions& o) {
  auto built = BuildE2ePlan(o);
  if (!built) return ReportError(built.error());
  E2ePlan& plan = *built;

  const sys::ProcessFacts process = sys::ProbeProcess();
  measure::BlockRunSignals();
  const FsRoot& root = FsRoot::System();
  const SystemCommandRunner commands;
  const sys::CheckContext context(root, commands, process);
  suite::Preflight preflight =
      suite::RunPreflight(context, fmt::format("rtpulse {} e2e, {}", kVersion, Invocation()));
  suite::E2eWorkload workload(plan.settings, context.info, kVersion, Invocation());
  E2eProgress progress(StderrProgressMode(o.quiet));
  suite::SignalPause pause;
  const suite::Services services =
      suite::MachineServices(plan.suite, root, std::move(preflight), pause, workload, progress);

  const suite::RunOutcome outcome = suite::RunSuite(plan.suite, services);
  if (outcome.result.scenarios.empty() || outcome.result.status == "refused" ||
      outcome.result.status == "running") {
    return ToInt(outcome.code);
  }
  std::FILE* text = o.json == "-" ? stderr : stdout;
  nlohmann::json doc = PrintE2eSummary(workload, plan.sweep, text);
  // A scenario the suite started but never measured (interrupted while its loads settled):
  // its folder stays, as for every suite, and result.json marks it; the summary says so too.
  doc["not_measured"] = nlohmann::json::array();
  for (const auto& s : outcome.result.scenarios) {
    if (s.latency || s.status != results::ScenarioStatus::kInterrupted) continue;
    fmt::print(text, "{}: not measured: {}\n", s.name, s.error);
    doc["not_measured"].push_back({{"scenario", s.name}, {"why", s.error}});
  }
  WriteE2eFiguresOf(plan.suite.out_dir, workload, doc, text);
  doc["results"] = plan.suite.out_dir;
  doc["status"] = outcome.result.status;
  int code = ToInt(outcome.code);
  const auto fail = [&](const Status& s) {
    if (s) return;
    ReportError(s.error());
    if (code == 0) code = ToInt(ExitCode::kFailure);
  };
  if (plan.sweep && doc.contains("recommendation")) {
    fail(WriteFileAtomic(plan.suite.out_dir + "/sweep.json",
                         nlohmann::json{{"recommendation", doc["recommendation"]}}.dump(2) + "\n"));
  }
  if (!o.csv.empty() && !workload.outcomes().empty()) {
    // The first scenario's frames (the baseline, or threads-1 of a sweep), as the seed wrote.
    fail(results::WriteE2eLatencyCsv(o.csv, workload.outcomes().front().rows));
  }
  fail(WriteE2eJson(o.json, doc));
  for (const auto& w : outcome.result.warnings) fmt::print(text, "warning: {}\n", w);
  fmt::print(text, "results: {}\n", plan.suite.out_dir);
  std::fflush(stdout);
  return code;
}

}  // namespace

Runner SetupE2e(CLI::App& sub) {
  auto o = std::make_shared<E2eOptions>();
  sub.add_option("--source", o->source,
                 "synthetic (default), synthetic:WxH, video:PATH, images:DIR or v4l2:DEVICE");
  sub.add_option("--model", o->model,
                 "depth model, .onnx (OpenCV DNN) or .tflite (Arm NN); default: the generated "
                 "depth-default.onnx (latency-representative, not trained)");
  sub.add_option("--backend", o->backend, "opencv or armnn (default: from the model's extension)");
  auto* threads = sub.add_option("--threads", o->threads_text, "inference threads (default 1)");
  sub.add_option("--frames", o->frames_text, "frames recorded per scenario (default 1000)");
  sub.add_option("--warmup", o->warmup_text, "frames run first, not recorded (default 10)");
  sub.add_option("--fps", o->fps,
                 "periodic mode at this frame rate (default: back-to-back, each frame when the "
                 "previous one is done)");
  sub.add_option("--deadline", o->deadline,
                 "a frame misses when Total exceeds this, e.g. 100ms (periodic default: one "
                 "frame period)");
  sub.add_option("--reference", o->reference,
                 "reference depths, CSV lines x,y,depth_m in source pixels (default: the "
                 "source's own, the ground plane of synthetic frames)");
  sub.add_option("--crop", o->crop, "X0,Y0,X1,Y1 fractions of the frame (default all)");
  sub.add_option("--roi", o->roi,
                 "X0,Y0,X1,Y1 fractions of the depth map judged (default 0.35,0.5,0.65,1)");
  sub.add_option("--near", o->near_text, "obstacle below this depth, metres (default 1.0)");
  sub.add_option("--clear", o->clear_text, "clear again above this depth, metres (default 1.25)");
  sub.add_option("--alert", o->alert, "none (default), stdout, file:PATH or gpio:CHIP:LINE");
  sub.add_option("--loopback", o->loopback,
                 "gpio:CHIP:LINE, an input wired to the alert line: its kernel edge timestamps");
  sub.add_option("--capture-policy", o->capture_policy,
                 "capture thread: other (default), fifo:PRIO or rr:PRIO");
  sub.add_option("--capture-cpus", o->capture_cpus, "capture thread's CPUs, e.g. 1 or 2-3");
  sub.add_option("--inference-policy", o->inference_policy,
                 "inference thread and the backend's workers: other (default), fifo:PRIO, rr:PRIO");
  sub.add_option("--inference-cpus", o->inference_cpus,
                 "inference thread's and workers' CPUs, e.g. 2-3");
  sub.add_option("--load", o->load,
                 "load SPEC (docs/loads.md): adds a loaded scenario beside the plain one; "
                 "repeatable");
  sub.add_option("--sweep", o->sweep,
                 "threads: one scenario per inference thread count 1..N, the lowest p99 Total "
                 "recommended");
  sub.add_option("-o,--out", o->out, "results folder (default ./rtpulse_e2e_YYYYMMDD_HHMMSS)");
  sub.add_option("--csv", o->csv,
                 "also write the first scenario's e2e_inference_latency.csv to this file");
  sub.add_option("--json", o->json,
                 "also write the run summary as JSON to this file ('-': stdout)");
  sub.add_flag("-q,--quiet", o->quiet, "no progress lines; only the final summary");
  sub.allow_extras(false);
  sub.footer(
      "Exit codes: 0 every scenario complete, 1 a scenario failed, 2 bad usage or input\n"
      "            (nothing run, nothing written), 3 missing resource (a backend not built,\n"
      "            no default model, a camera or GPIO line absent or busy), 130 interrupted\n"
      "            (results for the frames so far are written and marked).\n"
      "Docs: docs/e2e.md, docs/suite.md, docs/loads.md.");
  return [o, threads] {
    o->threads_given = threads->count() > 0;
    if (Status s = ParseE2eNumbers(*o); !s) return ReportError(s.error());
    return RunE2e(*o);
  };
}

}  // namespace rtpulse::cli
