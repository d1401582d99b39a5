#include "suite/e2e_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/cpus.h"
#include "core/parse.h"
#include "core/printable.h"
#include "core/run_cap.h"
#include "core/timestamp.h"
#include "e2e/actuation.h"
#include "e2e/frame_source.h"
#include "e2e/inference.h"
#include "e2e/pipeline.h"
#include "e2e/processing.h"
#include "e2e/worker_threads.h"
#include "load/spec.h"

namespace rtpulse::suite {

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

namespace {

/// The numeric options, parsed.
struct Numbers {
  int threads = 1;
  bool threads_given = false;
  int64_t frames = 1000;
  int64_t warmup = 10;
  std::optional<double> near_m;
  std::optional<double> clear_m;
};

Status ParseE2eNumbers(const E2eRequest& o, Numbers& n) {
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
  n.threads_given = !o.threads.empty();
  if (Status s = whole("--threads", o.threads, "2", n.threads); !s) return s;
  if (Status s = whole("--frames", o.frames, "1000", n.frames); !s) return s;
  if (Status s = whole("--warmup", o.warmup, "10", n.warmup); !s) return s;
  if (Status s = metres("--near", o.near_m, n.near_m); !s) return s;
  return metres("--clear", o.clear_m, n.clear_m);
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

Status BuildE2ePipeline(const Numbers& n, const E2eRequest& o, const std::vector<int>& online,
                        E2eSettings& s) {
  e2e::PipelineSettings& p = s.pipeline;
  if (n.frames < 1 || n.frames > 10'000'000) {
    return UsageError(
        fmt::format("--frames {}: give 1..10000000 frames per scenario (default 1000)", n.frames));
  }
  if (n.warmup < 0 || n.warmup > 100'000) {
    return UsageError(fmt::format(
        "--warmup {}: give 0..100000 frames run before recording (default 10)", n.warmup));
  }
  p.frames = static_cast<uint64_t>(n.frames);
  p.warmup_frames = static_cast<uint64_t>(n.warmup);
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
  // RTPULSE_MAX_RUN_S: the frames of that many seconds at --fps, or at 10 frames/s when the
  // pipeline runs free (a frame's time is not known before it runs).
  const double rate = p.mode == e2e::PipelineMode::kPeriodic ? p.fps : 10.0;
  if (Status st = CapRunCount(p.frames, 1e9 / rate, "--frames", "frames", s.notes); !st) {
    return st;
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

Expected<std::pair<int, int>> ParseE2eInputSize(const std::string& text) {
  int w = 0;
  int h = 0;
  char x = 0;
  char rest = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &rest) != 3 || (x != 'x' && x != 'X') ||
      w < 1 || h < 1 || w > 8192 || h > 8192) {
    return UsageError(fmt::format(
        "--input-size '{}': give WIDTHxHEIGHT in pixels, each 1..8192 (e.g. 256x256), for a "
        "model whose input size is symbolic",
        Printable(text)));
  }
  return std::pair{w, h};
}

Status BuildE2eStages(const Numbers& n, const E2eRequest& o, E2eSettings& s) {
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
  if (!o.input_size.empty()) {
    auto size = ParseE2eInputSize(o.input_size);
    if (!size) return size.error();
    s.input_width = size->first;
    s.input_height = size->second;
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
  if (n.near_m) {
    if (!std::isfinite(*n.near_m) || *n.near_m <= 0) {
      return UsageError(
          fmt::format("--near {}: give a distance in metres above 0 (e.g. 1.0)", *n.near_m));
    }
    s.decision.near_m = *n.near_m;
    if (!n.clear_m) s.decision.clear_m = std::max(s.decision.clear_m, *n.near_m * 1.25);
  }
  if (n.clear_m) {
    if (!std::isfinite(*n.clear_m) || *n.clear_m < s.decision.near_m) {
      return UsageError(fmt::format(
          "--clear {}: give a distance in metres at least --near ({}): clear again only above "
          "it (hysteresis)",
          *n.clear_m, s.decision.near_m));
    }
    s.decision.clear_m = *n.clear_m;
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
Status BuildE2eConfigurations(const Numbers& n, const E2eRequest& o, const std::vector<int>& online,
                              E2ePlan& plan) {
  E2eSettings& s = plan.settings;
  std::vector<int> counts;
  if (o.sweep.empty()) {
    if (Status st = e2e::CheckThreads(n.threads); !st) return st;
    counts = {n.threads};
  } else if (o.sweep == "threads") {
    if (n.threads_given) {
      return UsageError(
          "--sweep threads tries 1..N threads itself (N: the --inference-cpus or online CPUs): "
          "drop --threads");
    }
    const size_t most =
        s.pipeline.inference.cpus.empty() ? online.size() : s.pipeline.inference.cpus.size();
    for (size_t i = 1; i <= std::max<size_t>(1, most); ++i) counts.push_back(static_cast<int>(i));
    plan.sweep = true;
  } else {
    return UsageError(fmt::format("--sweep '{}': the only sweep is 'threads'", o.sweep));
  }
  for (const int threads : counts) {
    for (const bool loaded : {false, true}) {
      if (loaded && o.load.empty()) continue;
      E2eConfiguration c;
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

Status BuildE2eSuite(const E2eRequest& o, const std::vector<int>& online, E2ePlan& plan) {
  SuitePlan& p = plan.suite;
  p.online = online;
  p.cpus = plan.settings.pipeline.inference.cpus;
  std::vector<load::LoadSpec> loads;
  if (!o.load.empty()) {
    auto parsed = load::ParseLoadSpecs(o.load);
    if (!parsed) return parsed.error();
    loads = std::move(*parsed);
    for (const auto& l : loads) plan.settings.load_specs.push_back(l.text);
  }
  SuiteConfig& c = p.config;
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
    c.scenarios.push_back(ConfigurationScenario(
        config.scenario, config.configuration, config.loaded, loads, plan.settings.load_specs,
        config.loaded ? std::optional<int64_t>(kNsPerSec) : std::nullopt));
  }
  p.invocation = o.invocation;
  p.version = o.version;
  p.out_dir = o.out.empty() ? "rtpulse_e2e_" + RunFolderStamp() : o.out;
  return CheckOutputFolder(p.out_dir);
}

}  // namespace

Expected<E2ePlan> BuildE2ePlan(const E2eRequest& o, const FsRoot& root) {
  E2ePlan plan;
  Numbers n;
  if (Status s = ParseE2eNumbers(o, n); !s) return s.error();
  const std::vector<int> online = OnlineCpus(root);
  if (online.empty()) return ResourceError("no online CPU found (/sys/devices/system/cpu/online)");
  if (Status s = BuildE2ePipeline(n, o, online, plan.settings); !s) return s.error();
  if (Status s = BuildE2eStages(n, o, plan.settings); !s) return s.error();
  if (Status s = BuildE2eConfigurations(n, o, online, plan); !s) return s.error();
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
  return plan;
}

Status PrecheckE2e(E2ePlan& plan) {
  // The threads' scheduling tried once on a short-lived thread: a policy the kernel refuses
  // (no CAP_SYS_NICE) is the resource error before anything starts.
  for (const auto& [spec, policy, cpus] :
       {std::tuple{plan.settings.pipeline.capture, "--capture-policy", "--capture-cpus"},
        std::tuple{plan.settings.pipeline.inference, "--inference-policy", "--inference-cpus"}}) {
    if (Status s = e2e::CheckThreadSpec(spec, policy); !s) return s;
    Status applied;
    std::thread probe([&, spec = spec, policy = policy, cpus = cpus] {
      applied = e2e::ApplySpecToThisThread(spec, policy, cpus);
    });
    probe.join();
    if (!applied) return applied;
  }
  // Every stage opened once here, so a missing file, a busy GPIO line or a wrong-shaped model
  // is said before anything starts or is written; they are closed again before the run.
  const std::vector<int> threads_before = e2e::ListProcessThreads();
  auto stages = OpenE2eStages(plan.settings, plan.settings.configurations.front().threads);
  if (!stages) return stages.error();
  if ((*stages)->timing_only)
    plan.settings.notes.push_back(E2eTimingOnlyNote(plan.settings.source.text));
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
          spec.text, frames, needed - 1, needed - 1, frames == 0 ? 0 : frames - 1, spec.text));
    }
  }
  return {};
}

}  // namespace rtpulse::suite
