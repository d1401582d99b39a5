// rtpulse suite: pre-flight, then every scenario (loads + settle + measure), monitoring the
// whole time, writing the results tree (docs/suite.md) and checkpointing as it goes.
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/check_report.h"
#include "cli/command.h"
#include "cli/latency_options.h"
#include "cli/live_view.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/command_runner.h"
#include "core/exit_code.h"
#include "core/fs_root.h"
#include "core/parse.h"
#include "core/version.h"
#include "load/load_set.h"
#include "measure/engine.h"
#include "measure/sample_log.h"
#include "monitor/sampler.h"
#include "monitor/sources.h"
#include "results/cyclictest_format.h"
#include "results/suite_result.h"
#include "suite/suite_config.h"
#include "sys/check.h"
#include "sys/process_facts.h"
#include "sys/system_info.h"
#include "sys/tuning.h"

namespace rtpulse::cli {
namespace {

namespace fs = std::filesystem;
using results::ScenarioResult;
using results::ScenarioStatus;

/// The 1 us histogram behind the cyclictest-compatible files (histogram.txt, -h block).
constexpr int64_t kLinearHistogramUs = 1000;

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
  bool strict = false;
  bool samples = false;
  bool quiet = false;
  bool list = false;
};

/// Everything checked and decided before anything is started or written.
struct SuitePlan {
  suite::SuiteConfig config;
  std::vector<int> cpus;
  std::vector<int> online;
  std::string out_dir;
  measure::LatencyPlan latency;  ///< duration_ns set per scenario.
  int64_t checkpoint_ns = 10 * kNsPerSec;
};

std::string LocalStamp() {
  const time_t now = time(nullptr);
  tm local{};
  localtime_r(&now, &local);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d_%H%M%S", &local);
  return buf;
}

std::string Clock(int64_t ns) {
  const int64_t s = std::max<int64_t>(0, ns / kNsPerSec);
  return fmt::format("{:02d}:{:02d}:{:02d}", s / 3600, s / 60 % 60, s % 60);
}

Expected<int64_t> PositiveTime(const std::string& option, const std::string& text, bool zero_ok) {
  auto ns = ParseDurationNs(text);
  if (!ns) return UsageError(fmt::format("{}: {}", option, ns.error().message));
  if (*ns < 0 || (*ns == 0 && !zero_ok)) {
    return UsageError(fmt::format("{} '{}' must be greater than 0 (e.g. 10s, 5m)", option, text));
  }
  return *ns;
}

Expected<SuitePlan> BuildPlan(const SuiteOptions& o) {
  SuitePlan plan;
  plan.online = sys::OnlineCpus(FsRoot::System());
  if (!o.config.empty()) {
    auto config = suite::LoadSuiteFile(o.config, plan.online);
    if (!config) return config.error();
    plan.config = std::move(*config);
  } else {
    plan.config.source = "built-in";
    auto scenarios = suite::DefaultScenarios(plan.online);
    if (!scenarios) return scenarios.error();
    plan.config.scenarios = std::move(*scenarios);
  }
  suite::SuiteConfig& c = plan.config;
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
  auto checkpoint = PositiveTime("--checkpoint-interval", o.checkpoint_interval, false);
  if (!checkpoint) return checkpoint.error();
  if (*checkpoint > 10 * kNsPerSec) {
    return UsageError(fmt::format(
        "--checkpoint-interval '{}' is above 10s: a killed run must lose at most 10 s",
        o.checkpoint_interval));
  }
  plan.checkpoint_ns = *checkpoint;
  if (o.priority) c.priority = *o.priority;
  if (!o.interval.empty()) {
    auto i = ParseTimeNs(o.interval, kNsPerUs);
    if (!i) return UsageError("--interval: " + i.error().message);
    if (*i < 10 * kNsPerUs) {
      return UsageError(fmt::format("--interval '{}' is below 10us; give e.g. 1000 (us) or 1ms",
                                    o.interval));
    }
    c.interval_ns = *i;
  }

  plan.cpus = plan.online;
  if (!o.cpus.empty()) {
    auto cpus = ParseCpuList(o.cpus);
    if (!cpus) return UsageError("--cpus: " + cpus.error().message);
    for (const int cpu : *cpus) {
      if (std::find(plan.online.begin(), plan.online.end(), cpu) == plan.online.end()) {
        return UsageError(fmt::format("--cpus '{}': CPU {} is not online (online: {})", o.cpus,
                                      cpu, FormatCpuList(plan.online)));
      }
    }
    plan.cpus = *cpus;
  }
  if (o.rt_throttling_off && !o.tune) {
    return UsageError("--no-rt-throttling is a tuning: add --tune");
  }

  // The probes: one SCHED_FIFO thread per measured CPU, the same settings in every scenario.
  LatencyOptions lo;
  lo.affinity_given = true;
  lo.affinity = FormatCpuList(plan.cpus);
  lo.threads_given = true;
  lo.threads = std::to_string(plan.cpus.size());
  lo.priority = c.priority;
  lo.interval_us = c.interval_ns / kNsPerUs;
  lo.distance_us = 0;
  lo.histogram_us = kLinearHistogramUs;
  lo.quiet = true;
  if (!o.wake.empty()) {
    lo.wake = o.wake;
  } else {
    std::vector<std::string> names;
    for (const auto w : c.wake) names.emplace_back(measure::WakePathName(w));
    lo.wake = fmt::format("{}", fmt::join(names, ","));
  }
  if (o.samples) lo.samples = "samples.bin";  // sizes the rings; the file is per scenario
  auto latency = BuildLatencyPlan(lo, plan.online);
  if (!latency) return latency.error();
  plan.latency = std::move(*latency);
  plan.latency.duration_ns = 0;

  plan.out_dir = o.out.empty() ? "rtpulse_" + LocalStamp() : o.out;
  if (Status s = CheckOutputFolder(plan.out_dir); !s) return s.error();
  return plan;
}

int64_t ScenarioDuration(const suite::SuiteConfig& c, const suite::Scenario& s) {
  return s.duration_ns.value_or(c.duration_ns);
}
int64_t ScenarioSettle(const suite::SuiteConfig& c, const suite::Scenario& s) {
  return s.settle_ns.value_or(c.settle_ns);
}

nlohmann::json ConfigJson(const SuitePlan& plan) {
  const auto& c = plan.config;
  nlohmann::json scenarios = nlohmann::json::array();
  for (const auto& s : c.scenarios) {
    scenarios.push_back({{"name", s.name},
                         {"description", s.description},
                         {"loads", s.load_specs},
                         {"duration_s", static_cast<double>(ScenarioDuration(c, s)) / 1e9},
                         {"settle_s", static_cast<double>(ScenarioSettle(c, s)) / 1e9}});
  }
  std::vector<std::string> wake;
  for (const auto w : plan.latency.paths) wake.emplace_back(measure::WakePathName(w));
  return {{"name", c.name},
          {"source", c.source},
          {"cpus", FormatCpuList(plan.cpus)},
          {"priority", c.priority},
          {"policy", "fifo"},
          {"interval_us", c.interval_ns / kNsPerUs},
          {"wake", wake},
          {"monitor_interval_s", static_cast<double>(c.monitor_interval_ns) / 1e9},
          {"checkpoint_interval_s", static_cast<double>(plan.checkpoint_ns) / 1e9},
          {"linear_histogram_us", kLinearHistogramUs},
          {"scenarios", scenarios}};
}

nlohmann::json SystemJson(const sys::SystemInfo& info) {
  return {{"sysname", info.sysname},
          {"nodename", info.nodename},
          {"release", info.release},
          {"version", info.version},
          {"machine", info.machine},
          {"preempt_rt", info.preempt_rt},
          {"preemption_model", info.preemption_model},
          {"preempt_dynamic_mode", info.preempt_dynamic_mode},
          {"preemption_evidence", info.preemption_evidence},
          {"online_cpus", FormatCpuList(info.online_cpus)},
          {"governors", info.governors},
          {"clocksource", info.clocksource},
          {"hypervisor", info.hypervisor},
          {"board", info.board},
          {"kernel_config", info.kernel_config ? "available" : info.kernel_config_problem}};
}

/// Says what the suite is doing: one redrawn line on a terminal, a line every 10 s into a
/// pipe, nothing with --quiet. Also the engine's checkpoint callback.
class SuiteProgress final : public measure::RunObserver {
 public:
  SuiteProgress(LiveMode mode, int64_t checkpoint_ns) : mode_(mode), checkpoint_ns_(checkpoint_ns) {}

  /// Where the suite is: scenario i of n, its planned measurement, the time left after it.
  void SetScenario(size_t index, size_t count, std::string name, int64_t planned_ns,
                   int64_t after_ns) {
    index_ = index;
    count_ = count;
    name_ = std::move(name);
    planned_ns_ = planned_ns;
    after_ns_ = after_ns;
  }
  void SetCheckpoint(std::function<void(const results::PathRun&, size_t)> fn) {
    checkpoint_ = std::move(fn);
  }

  void Settling(int64_t left_ns) {
    Show(fmt::format("[{}/{}] {}: loads settling, {} left (not measured)   suite ETA {}",
                     index_ + 1, count_, name_, Clock(left_ns),
                     Clock(left_ns + planned_ns_ + after_ns_)));
  }
  void Done() {
    if (mode_ == LiveMode::kTty && shown_) std::fputs("\r\033[2K", stdout);
    std::fflush(stdout);
    shown_ = false;
  }

  bool WantsTicks() const override { return mode_ != LiveMode::kOff; }
  void OnTick(const std::vector<measure::LiveProbe>& probes, int64_t elapsed_ns) override {
    int64_t max_ns = 0;
    int64_t p99_ns = 0;
    uint64_t missed = 0;
    uint64_t count = 0;
    for (const auto& p : probes) {
      max_ns = std::max(max_ns, p.max_ns);
      p99_ns = std::max(p99_ns, p.p99_ns);
      missed += p.missed;
      count += p.count;
    }
    const int64_t left = std::max<int64_t>(0, planned_ns_ - elapsed_ns);
    Show(fmt::format("[{}/{}] {}: {} / {}  samples {}  max {}  p99 {}  missed {}   ETA {}  "
                     "suite ETA {}",
                     index_ + 1, count_, name_, Clock(elapsed_ns), Clock(planned_ns_), count,
                     results::HumanNs(static_cast<double>(max_ns)),
                     results::HumanNs(static_cast<double>(p99_ns)), missed, Clock(left),
                     Clock(left + after_ns_)));
  }
  int64_t CheckpointIntervalNs() const override { return checkpoint_ns_; }
  void OnCheckpoint(size_t path_index, const results::PathRun& snapshot) override {
    if (checkpoint_) checkpoint_(snapshot, path_index);
  }

 private:
  void Show(const std::string& line) {
    const int64_t now = MonotonicNs();
    if (mode_ == LiveMode::kOff) return;
    if (mode_ == LiveMode::kTty) {
      std::fprintf(stdout, "\r\033[2K%s", line.c_str());
      shown_ = true;
    } else {
      if (last_plain_ns_ >= 0 && now - last_plain_ns_ < 10 * kNsPerSec) return;
      std::fprintf(stdout, "%s\n", line.c_str());
    }
    last_plain_ns_ = now;
    std::fflush(stdout);
  }

  LiveMode mode_;
  int64_t checkpoint_ns_;
  std::function<void(const results::PathRun&, size_t)> checkpoint_;
  size_t index_ = 0;
  size_t count_ = 0;
  std::string name_;
  int64_t planned_ns_ = 0;
  int64_t after_ns_ = 0;
  int64_t last_plain_ns_ = -1;
  bool shown_ = false;
};

/// Waits `ns` while the loads warm up; true when SIGINT/SIGTERM came instead.
bool Settle(int64_t ns, SuiteProgress& progress) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  const int64_t end = MonotonicNs() + ns;
  for (;;) {
    const int64_t left = end - MonotonicNs();
    if (left <= 0) return false;
    progress.Settling(left);
    const int64_t wait = std::min<int64_t>(left, kNsPerSec);
    const timespec timeout{static_cast<time_t>(wait / kNsPerSec),
                           static_cast<long>(wait % kNsPerSec)};
    if (sigtimedwait(&stop, nullptr, &timeout) > 0) return true;
  }
}

/// The suite while it runs: owns the result and writes it.
class SuiteRun {
 public:
  SuiteRun(const SuitePlan& plan, results::SuiteResult result)
      : plan_(plan), result_(std::move(result)) {}

  results::SuiteResult& result() { return result_; }
  std::string Path(const std::string& name) const { return plan_.out_dir + "/" + name; }

  /// result.json now (atomic); a failure is reported once and remembered.
  void WriteResult() {
    result_.updated_realtime_ns = ClockNs(CLOCK_REALTIME);
    if (Status s = WriteFileAtomic(Path("result.json"), results::ToJson(result_).dump(1) + "\n");
        !s && !write_error_) {
      write_error_ = s.error();
      ReportError(s.error());
    }
  }
  void WriteSummaries() {
    Write(Path("statistical_summary.txt"), results::FormatStatisticalSummary(result_));
    Write(Path("statistical_summary.json"),
          results::StatisticalSummaryJson(result_).dump(2) + "\n");
  }
  void Write(const std::string& path, const std::string& text) {
    if (Status s = WriteFileAtomic(path, text); !s && !write_error_) {
      write_error_ = s.error();
      ReportError(s.error());
    }
  }
  bool write_failed() const { return write_error_.has_value(); }

  /// The cyclictest-compatible files of one scenario.
  void WriteScenarioFiles(const ScenarioResult& s) {
    if (!s.latency) return;
    const std::string dir = Path(s.name) + "/";
    const results::LatencyRun& run = *s.latency;
    Write(dir + "cyclictest.json", results::ToJson(run, false).dump(2) + "\n");
    std::string block;
    std::string status_lines;
    for (const auto& path : run.paths) {
      if (run.paths.size() > 1) block += fmt::format("# wake path: {}\n", path.wake);
      block += results::FormatHistogramBlock(path, false, false);
      for (const auto& p : path.probes) {
        status_lines += results::FormatStatusLine(results::StatusOf(p, false), false) + "\n";
      }
    }
    Write(dir + "histogram.txt", block);
    Write(dir + "cyclictest_raw.txt", block + status_lines);
    // The seed's one-line files: cyclictest's own summary lines, so old scripts keep working.
    auto line = [&](const std::string& prefix) {
      std::string out;
      size_t at = 0;
      while ((at = block.find(prefix, at)) != std::string::npos) {
        const size_t end = block.find('\n', at);
        out += block.substr(at, end - at) + "\n";
        at = end;
      }
      return out;
    };
    Write(dir + "min_latency.txt", line("# Min Latencies:"));
    Write(dir + "avg_latency.txt", line("# Avg Latencies:"));
    Write(dir + "max_latency.txt", line("# Max Latencies:"));
  }

 private:
  const SuitePlan& plan_;
  results::SuiteResult result_;
  std::optional<Error> write_error_;
};

void FillRun(results::LatencyRun& run, const sys::SystemInfo& info) {
  run.rtpulse_version = kVersion;
  run.cmdline = Invocation();
  FillSystem(info, run);
}

int ListScenarios(const SuitePlan& plan) {
  const auto& c = plan.config;
  fmt::print("suite '{}' ({}), CPUs {}:\n", c.name, c.source, FormatCpuList(plan.cpus));
  int64_t total = 0;
  for (const auto& s : c.scenarios) {
    const int64_t d = ScenarioDuration(c, s);
    const int64_t settle = ScenarioSettle(c, s);
    total += d + settle;
    fmt::print("  {:<14} {:>8} (+{} settle)  {}\n", s.name, Clock(d), Clock(settle),
               s.description);
    for (const auto& spec : s.load_specs) fmt::print("  {:<14} load {}\n", "", spec);
  }
  fmt::print("total about {}\n", Clock(total));
  return 0;
}

int RunSuite(const SuiteOptions& o) {
  auto built = BuildPlan(o);
  if (!built) return ReportError(built.error());
  const SuitePlan& plan = *built;
  if (o.list) return ListScenarios(plan);
  const suite::SuiteConfig& config = plan.config;

  const sys::ProcessFacts process = sys::ProbeProcess();
  // Signals are taken synchronously from here on (sigtimedwait in the settle wait and in the
  // engine); load workers restore their own mask.
  measure::BlockRunSignals();

  std::error_code ec;
  fs::create_directories(plan.out_dir, ec);
  if (ec) {
    return ReportError(
        UsageError(fmt::format("--out '{}': cannot create it: {}", plan.out_dir, ec.message())));
  }

  // Pre-flight: the same audit as `rtpulse check`, recorded with the results.
  const SystemCommandRunner commands;
  const sys::CheckContext context(FsRoot::System(), commands, process);
  const auto checks = sys::RunChecks(context);
  const CheckSummary counts = Summarise(checks);
  const sys::SystemInfo& info = context.info;
  CheckHeader header{info.nodename, info.release,    info.version,          info.machine,
                     info.board,    info.hypervisor, info.preemption_model, !FsRoot::System().root().empty()};

  results::SuiteResult initial;
  initial.rtpulse_version = kVersion;
  initial.cmdline = Invocation();
  initial.start_realtime_ns = ClockNs(CLOCK_REALTIME);
  initial.config = ConfigJson(plan);
  initial.system = SystemJson(info);
  initial.system["checks"] = nlohmann::json::parse(FormatCheckJson(header, process, checks));
  initial.warnings = sys::EnvironmentWarnings(info);
  for (const auto& c : checks) {
    if (c.status == sys::CheckStatus::kWarn || c.status == sys::CheckStatus::kFail) {
      initial.warnings.push_back(
          fmt::format("pre-flight {} {}: {}", sys::StatusName(c.status), c.title, c.found));
    }
  }
  for (const auto& note : plan.latency.notes) initial.warnings.push_back(note);
  for (const auto& s : config.scenarios) {
    ScenarioResult r;
    r.name = s.name;
    r.description = s.description;
    r.load_specs = s.load_specs;
    r.settle_ns = ScenarioSettle(config, s);
    r.planned_ns = ScenarioDuration(config, s);
    initial.scenarios.push_back(std::move(r));
  }
  SuiteRun run(plan, std::move(initial));
  results::SuiteResult& result = run.result();

  run.Write(run.Path("system_info.txt"),
            fmt::format("rtpulse {} suite, {}\n\n", kVersion, Invocation()) +
                FormatCheckText(header, checks, true, false));
  run.Write(run.Path("system_info.json"), result.system.dump(2) + "\n");
  for (const auto& w : sys::EnvironmentWarnings(info)) fmt::print(stderr, "rtpulse: warning: {}\n", w);
  fmt::print(stderr, "rtpulse: pre-flight: {} pass, {} warn, {} fail (details: {})\n", counts.pass,
             counts.warn, counts.fail, run.Path("system_info.txt"));
  if (o.strict && counts.fail > 0) {
    result.status = "refused";
    run.WriteResult();
    for (const auto& c : checks) {
      if (c.status == sys::CheckStatus::kFail) {
        fmt::print(stderr, "rtpulse: fail: {}: {}{}\n", c.title, c.found,
                   c.fix.empty() ? "" : " (fix: " + c.fix + ")");
      }
    }
    fmt::print(stderr,
               "rtpulse: error: --strict: {} pre-flight check(s) failed; nothing was run. Fix "
               "them, or run without --strict\n",
               counts.fail);
    return ToInt(ExitCode::kFailure);
  }
  if (run.write_failed()) return ToInt(ExitCode::kUsage);

  // Tunings, restored on every way out: the destructor, and a guardian process if we die.
  std::unique_ptr<sys::Tuning> tuning;
  if (o.tune) {
    sys::TuneOptions tune;
    tune.measured_cpus = plan.cpus;
    tune.online_cpus = plan.online;
    tune.rt_throttling_off = o.rt_throttling_off;
    tune.journal_path = run.Path("tuning_journal.json");
    auto applied = sys::Tuning::Apply(FsRoot::System(), tune);
    if (!applied) return ReportError(applied.error());
    tuning = std::move(*applied);
    result.tuning = tuning->ToJson();
    fmt::print(stderr, "rtpulse: --tune:\n{}", tuning->Describe());
  }

  // One low-priority monitor for the whole suite.
  const SystemCommandRunner runner;
  monitor::SamplerOptions sampler_options;
  sampler_options.interval_ns = config.monitor_interval_ns;
  auto sampler = monitor::Sampler::Open(run.Path("thermal_power_log.csv"), sampler_options,
                                        monitor::DefaultSources(FsRoot::System(), runner));
  if (!sampler) return ReportError(sampler.error());
  (*sampler)->Start();
  result.monitor = {{"csv", "thermal_power_log.csv"},
                    {"stats", "power_thermal_stats.txt"},
                    {"interval_s", static_cast<double>(config.monitor_interval_ns) / 1e9},
                    {"notes", (*sampler)->notes()}};
  run.WriteResult();

  SuiteProgress progress(ChooseLiveMode(o.quiet, false), plan.checkpoint_ns);
  bool interrupted = false;
  bool failed = false;
  for (size_t i = 0; i < config.scenarios.size() && !interrupted; ++i) {
    const suite::Scenario& scenario = config.scenarios[i];
    ScenarioResult& r = result.scenarios[i];
    int64_t after = 0;
    for (size_t k = i + 1; k < config.scenarios.size(); ++k) {
      after += ScenarioDuration(config, config.scenarios[k]) +
               ScenarioSettle(config, config.scenarios[k]);
    }
    progress.SetScenario(i, config.scenarios.size(), scenario.name, r.planned_ns, after);
    fs::create_directories(run.Path(scenario.name), ec);
    r.start_realtime_ns = ClockNs(CLOCK_REALTIME);
    r.status = ScenarioStatus::kSettling;
    run.WriteResult();

    std::vector<load::LoadSpec> specs = scenario.loads;
    for (auto& spec : specs) spec.params.duration_ns = 0;
    load::LoadSet loads(std::move(specs));
    if (Status s = loads.Start(); !s) {
      r.status = ScenarioStatus::kFailed;
      r.error = "loads did not start: " + s.error().message;
      r.end_realtime_ns = ClockNs(CLOCK_REALTIME);
      fmt::print(stderr, "rtpulse: scenario {}: {}\n", scenario.name, r.error);
      failed = true;
      run.WriteResult();
      continue;
    }
    interrupted = r.settle_ns > 0 && Settle(r.settle_ns, progress);
    if (!interrupted) {
      r.status = ScenarioStatus::kMeasuring;
      measure::LatencyPlan latency = plan.latency;
      latency.duration_ns = r.planned_ns;
      std::unique_ptr<measure::SampleSink> sink;
      if (o.samples) {
        measure::SamplesFileInfo samples_info;
        samples_info.start_realtime_ns = ClockNs(CLOCK_REALTIME);
        samples_info.start_monotonic_ns = MonotonicNs();
        auto opened = measure::OpenSamplesFile(run.Path(scenario.name + "/samples.bin"),
                                               samples_info);
        if (!opened) {
          r.warnings.push_back("no per-sample log: " + opened.error().message);
        } else {
          sink = std::move(*opened);
          r.samples_file = scenario.name + "/samples.bin";
        }
      }
      // Checkpoints: the paths finished so far plus a live snapshot of the running one.
      results::LatencyRun partial;
      FillRun(partial, info);
      partial.start_realtime_ns = ClockNs(CLOCK_REALTIME);
      progress.SetCheckpoint([&](const results::PathRun& snapshot, size_t path_index) {
        partial.paths.resize(path_index);
        partial.paths.push_back(snapshot);
        partial.end_realtime_ns = ClockNs(CLOCK_REALTIME);
        r.latency = partial;
        run.WriteResult();
        if (Status s = (*sampler)->WriteStats(run.Path("power_thermal_stats.txt")); !s) {
          r.warnings.push_back(s.error().message);
        }
      });
      auto measured = measure::RunLatency(latency, &progress, std::move(sink));
      progress.SetCheckpoint(nullptr);
      progress.Done();
      if (!measured) {
        r.status = ScenarioStatus::kFailed;
        r.error = measured.error().message;
        r.latency.reset();
        failed = true;
        fmt::print(stderr, "rtpulse: scenario {}: {}\n", scenario.name, r.error);
      } else {
        results::LatencyRun& m = *measured;
        FillRun(m, info);
        m.warnings.insert(m.warnings.begin(), result.warnings.begin(), result.warnings.end());
        m.return_code = m.interrupted ? ToInt(ExitCode::kInterrupted) : 0;
        interrupted = m.interrupted;
        r.status = m.interrupted ? ScenarioStatus::kInterrupted : ScenarioStatus::kComplete;
        if (!m.samples_error.empty()) r.warnings.push_back(m.samples_error);
        r.latency = std::move(m);
      }
    } else {
      r.status = ScenarioStatus::kInterrupted;
      r.error = "interrupted while the loads settled; nothing measured";
    }
    loads.Stop();
    const auto reports = loads.Reports();
    r.loads = LoadReportsJson(reports);
    for (const auto& report : reports) {
      for (const auto& w : report.warnings) r.warnings.push_back(report.spec + ": " + w);
    }
    for (const auto& w : r.warnings) fmt::print(stderr, "rtpulse: {}: warning: {}\n", scenario.name, w);
    r.end_realtime_ns = ClockNs(CLOCK_REALTIME);
    run.WriteScenarioFiles(r);
    run.WriteResult();
  }
  progress.Done();

  // Wind down in the reverse order: monitor, tunings; then the final files.
  if (Status s = (*sampler)->Stop(); !s) result.warnings.push_back(s.error().message);
  if (Status s = (*sampler)->WriteStats(run.Path("power_thermal_stats.txt"), interrupted); !s) {
    ReportError(s.error());
  }
  if (tuning) {
    if (Status s = tuning->Restore(); !s) {
      result.warnings.push_back("tuning restore: " + s.error().message);
      ReportError(s.error());
    }
    result.tuning = tuning->ToJson();
  }
  result.status = interrupted ? "interrupted" : failed ? "failed" : "complete";
  run.WriteSummaries();
  run.WriteResult();

  std::fputs(results::FormatStatisticalSummary(result).c_str(), stdout);
  for (const auto& w : result.warnings) fmt::print("warning: {}\n", w);
  fmt::print("results: {}\n", plan.out_dir);
  std::fflush(stdout);
  if (interrupted) return ToInt(ExitCode::kInterrupted);
  if (failed || run.write_failed()) return ToInt(ExitCode::kFailure);
  return ToInt(ExitCode::kOk);
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
               "with --tune: also turn RT throttling off (sched_rt_runtime_us = -1)");
  sub.add_flag("--strict", o->strict, "refuse to run (exit 1) when a pre-flight check fails");
  sub.add_flag("--samples", o->samples, "also log every sample to <scenario>/samples.bin");
  sub.add_flag("-q,--quiet", o->quiet, "no progress lines; only the final summary");
  sub.add_flag("--list", o->list, "print the scenarios that would run, then exit");
  sub.allow_extras(false);
  sub.footer(
      "Exit codes: 0 every scenario complete, 1 a scenario failed (or --strict refused),\n"
      "            2 bad usage or input (nothing run), 3 missing privilege or resource,\n"
      "            130 interrupted (results for what ran are written and marked).\n"
      "Docs: docs/suite.md, docs/suite-config.md, docs/result-json.md.");
  return [o] { return RunSuite(*o); };
}

}  // namespace rtpulse::cli
